/**
 * Which vault the window is on: the embedded one (DesktopVault) or a team
 * vault, a `tessera serve` on PostgreSQL reached over REST. Connecting tests
 * the management key (`GET /tenants/self`), registers a private application
 * for the desktop's token work (a management key holds no token permissions),
 * and keeps both keys only through a `TeamCredentialStore` (the OS keychain in
 * the app), with the private CA certificate the server's certificate may need
 * (team-trust.ts). The keys never go back to the window and are never logged.
 * `routeByConnection` sends every channel to the table of the vault in use,
 * so neither table needs to know about the other.
 */
import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import { connectTeamRequest, tenant as tenantSchema, tenantNameSchema } from '../../shared/contracts'
import { IPC_METHODS, type ConnectTeamRequest, type Namespace, type TeamVaultConnection, type VaultConnection, type VaultStatus } from '../../shared/ipc'
import type { Application, Tenant } from '../../shared/types'
import { AppError, ValidationError } from '../app'
import type { Logger } from '../infra/logger'
import { method, none } from './handler-method'
import type { DesktopHandlers } from './handler-method'
import { TeamClient } from './team-client'
import { createTeamHandlers, type TeamHandlers, type TeamSession } from './team-handlers'
import { caCertificateFor, teamTransport, type TeamTransport } from './team-trust'

/** What is kept of a team connection between starts: secrets, so only in the OS keychain. */
export interface TeamCredentials {
  url: string
  managementKey: string
  /** The key of the private application the desktop registered for its token work. */
  tokenKey: string
  tokenApplicationId: string
  /** PEM: the only CA the server's certificate is checked against, when given; else the CAs Node.js trusts. */
  caCertificate?: string
}

export interface TeamCredentialStore {
  /** Whether what is saved outlives the app (the OS keychain); false keeps it for this session only. */
  readonly persistent: boolean
  load(): Promise<TeamCredentials | undefined>
  save(credentials: TeamCredentials): Promise<void>
  clear(): Promise<void>
}

/** A store that keeps the connection in memory only: without a keychain, and in tests. */
export function memoryTeamCredentialStore(): TeamCredentialStore {
  let kept: TeamCredentials | undefined
  return {
    persistent: false,
    load: async () => kept,
    save: async (credentials) => void (kept = credentials),
    clear: async () => void (kept = undefined)
  }
}

/** The token permissions of the desktop's application on a team vault: everything but `token:use`. */
const DESKTOP_TOKEN_PERMISSIONS = ['token:create', 'token:read', 'token:update', 'token:delete', 'token:search']

/** How long the start waits for the remembered team vault to answer before showing the window anyway. */
const RESTORE_WAIT_MS = 3_000
/** How often an unreachable team vault is asked again while the window polls. */
const RETRY_MS = 10_000

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]'])

/** `/tenants/self` as a Tessera vault answers it: a name its own vault would refuse (too long, invisible characters) is not one. */
const teamTenant = tenantSchema.extend({ name: tenantNameSchema })

/** The tenant behind the client's key, or a 503 saying the server does not answer as a Tessera vault. */
async function fetchTenant(client: TeamClient): Promise<Tenant> {
  const tenant = teamTenant.safeParse(await client.get<unknown>('/tenants/self'))
  if (tenant.success) return tenant.data as Tenant
  const nameIssue = tenant.error.issues.find((issue) => issue.path[0] === 'name' && issue.code !== 'invalid_type')
  throw client.notTesseraAnswer(nameIssue ? `its tenant name ${nameIssue.message}` : 'its answer to /tenants/self is not a tenant')
}

/** The server's base URL (no trailing slash), or a 400 naming `url`. Plain http only to this computer: the key would cross in the clear. */
export function teamBaseUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw ValidationError.field('url', 'is not a URL, such as https://vault.example.com')
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    throw ValidationError.field('url', 'must start with https:// (plain http:// only to this computer)')
  }
  if (url.username || url.password || url.search || url.hash) throw ValidationError.field('url', 'must not hold a user, password, query or fragment')
  return url.origin + url.pathname.replace(/\/+$/, '')
}

export interface TeamConnectionOptions {
  store: TeamCredentialStore
  logger: Logger
  /** Names the desktop's application on the server; the machine's host name by default. */
  deviceName?: string
  timeoutMs?: number
}

export class TeamConnection {
  private session: TeamSession | undefined
  /** How the session's requests go out; closed once the session is dropped. */
  private transport: TeamTransport | undefined
  private handlers: TeamHandlers | undefined
  private lastRetry = 0
  /** Serialises connect, disconnect and restore. */
  private turn: Promise<unknown> = Promise.resolve()

  constructor(private readonly options: TeamConnectionOptions) {}

  /** The team table while connected, else undefined (the embedded vault answers). */
  get remote(): TeamHandlers | undefined {
    return this.handlers
  }

  current(): VaultConnection {
    return this.session ? { ...this.session.info } : { kind: 'embedded' }
  }

  /**
   * On start: back onto the remembered team vault, if any. The tenant's name is waited for a few
   * seconds at most, so a server that does not answer cannot hold the window back; it still
   * connects, its calls then say why, and the sidebar says it is not reachable until it answers.
   */
  restore(embeddedStatus: () => Promise<VaultStatus>): Promise<VaultConnection> {
    return this.exclusive(async () => {
      const credentials = await this.options.store.load().catch((error: Error) => {
        this.options.logger.warn({ err: { name: error.name } }, 'the team vault connection could not be read from the keychain')
        return undefined
      })
      if (credentials) {
        this.open(credentials, embeddedStatus, await teamTransport(credentials.caCertificate))
        await Promise.race([this.refreshTenant(), sleep(RESTORE_WAIT_MS)])
      }
      return this.current()
    })
  }

  /** Tests the key, registers the desktop's application, keeps the keys, and moves the window onto the team vault. */
  connect({ url, key, caCertificate }: ConnectTeamRequest, embeddedStatus: () => Promise<VaultStatus>): Promise<VaultConnection> {
    return this.exclusive(async () => {
      const baseUrl = teamBaseUrl(url)
      const trustedCa = caCertificateFor(baseUrl, caCertificate)
      const transport = await teamTransport(trustedCa)
      const management = this.client(baseUrl, key, transport)
      const { tenant, credentials } = await this.register(management, key, trustedCa).catch((error: unknown) => {
        void closeQuietly(transport)
        throw error
      })
      const previous = this.detach()
      this.open(credentials, embeddedStatus, transport)
      this.session!.info = { ...this.session!.info, tenantId: tenant.id, tenantName: tenant.name }
      if (previous) await this.retire(previous)
      this.options.logger.info({ host: management.host, privateCa: trustedCa !== undefined }, 'connected to a team vault')
      return this.current()
    })
  }

  /** Tests the management key, registers the desktop's application and keeps the credentials that reach it. */
  private async register(management: TeamClient, managementKey: string, caCertificate: string | undefined): Promise<{ tenant: Tenant; credentials: TeamCredentials }> {
    const tenant = await this.checkManagementKey(management)
    const application = await this.registerDesktopApplication(management)
    const credentials: TeamCredentials = { url: management.baseUrl, managementKey, tokenKey: application.key!, tokenApplicationId: application.id, ...(caCertificate && { caCertificate }) }
    await this.options.store.save(credentials)
    return { tenant, credentials }
  }

  /** Back to the embedded vault: the desktop's application is deleted on the server (when it answers) and the keys are forgotten. */
  disconnect(): Promise<VaultConnection> {
    return this.exclusive(async () => {
      const previous = this.detach()
      await this.options.store.clear()
      if (previous) await this.retire(previous)
      return this.current()
    })
  }

  /** The `connection` channels. */
  channels(embeddedStatus: () => Promise<VaultStatus>): DesktopHandlers['connection'] {
    return {
      current: method(none, async () => this.current()),
      connect: method(z.tuple([connectTeamRequest]), ([request]) => this.connect(request, embeddedStatus)),
      disconnect: method(none, () => this.disconnect())
    }
  }

  private client(baseUrl: string, key: string, transport: TeamTransport): TeamClient {
    return new TeamClient(baseUrl, key, { fetch: transport.fetch, timeoutMs: this.options.timeoutMs })
  }

  private open(credentials: TeamCredentials, embeddedStatus: () => Promise<VaultStatus>, transport: TeamTransport): void {
    const management = this.client(credentials.url, credentials.managementKey, transport)
    const info: TeamVaultConnection = { kind: 'team', url: credentials.url, host: management.host, remembered: this.options.store.persistent }
    if (credentials.caCertificate) info.privateCa = true
    const session: TeamSession = {
      management,
      tokens: this.client(credentials.url, credentials.tokenKey, transport),
      applicationId: credentials.tokenApplicationId,
      info,
      revalidate: () => this.retryUnreachable()
    }
    this.session = session
    this.transport = transport
    this.handlers = createTeamHandlers(session, embeddedStatus)
  }

  /** Takes the window off the current session, if any, and hands it back to be retired. */
  private detach(): { session: TeamSession; transport: TeamTransport } | undefined {
    const { session, transport } = this
    this.session = undefined
    this.transport = undefined
    this.handlers = undefined
    return session && transport ? { session, transport } : undefined
  }

  /** A dropped session: its application deleted on the server, then its connections closed. */
  private async retire({ session, transport }: { session: TeamSession; transport: TeamTransport }): Promise<void> {
    await this.forgetDesktopApplication(session)
    void closeQuietly(transport)
  }

  /** While the server is marked unreachable, the window's status polls ask it again, at most every RETRY_MS. */
  private retryUnreachable(): void {
    const now = Date.now()
    if (!this.session?.info.error || now - this.lastRetry < RETRY_MS) return
    this.lastRetry = now
    void this.refreshTenant()
  }

  private async refreshTenant(): Promise<void> {
    const session = this.session
    if (!session) return
    try {
      const tenant = await fetchTenant(session.management)
      session.info = { ...session.info, tenantId: tenant.id, tenantName: tenant.name, error: undefined }
    } catch (error) {
      session.info = { ...session.info, error: error instanceof AppError ? error.message : 'The team vault could not be reached.' }
    }
  }

  /** The tenant behind the key; a 400 naming `url` or `key` when the server or the key will not do. */
  private async checkManagementKey(management: TeamClient): Promise<Tenant> {
    try {
      return await fetchTenant(management)
    } catch (error) {
      throw refusal(error, 'is not a management key of this team vault (it needs tenant:read)')
    }
  }

  private async registerDesktopApplication(management: TeamClient): Promise<Application & { key?: string }> {
    const name = `Tessera desktop (${this.options.deviceName ?? hostname()})`.slice(0, 100)
    try {
      return await management.post<Application & { key?: string }>('/applications', { name, type: 'private', permissions: DESKTOP_TOKEN_PERMISSIONS })
    } catch (error) {
      throw refusal(error, 'cannot register the desktop with this team vault (it needs application:create)')
    }
  }

  /** Deletes the desktop's application on the server; if it cannot be reached, the application stays (listed under Applications). */
  private async forgetDesktopApplication(session: TeamSession): Promise<void> {
    await session.management.delete(`/applications/${encodeURIComponent(session.applicationId)}`).catch((error: Error) => {
      this.options.logger.warn({ err: { name: error.name }, host: session.info.host }, "the desktop's application on the team vault could not be deleted")
    })
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work)
    this.turn = run.catch(() => undefined)
    return run
  }
}

/** Closes a transport's connections once their requests are done; nothing to report if that fails. */
function closeQuietly(transport: TeamTransport): Promise<void> {
  return transport.close().catch(() => undefined)
}

/** A failed connection attempt as a 400 naming the field at fault: the URL when the server is out of reach, the key when it is refused. */
function refusal(error: unknown, keyMessage: string): AppError {
  if (!(error instanceof AppError)) return ValidationError.field('url', 'does not answer as a Tessera team vault')
  if (error.code === 'vault_locked') return ValidationError.field('url', error.message.replace(/^The team vault at /, 'the server at '))
  if (error.code === 'unauthenticated') return ValidationError.field('key', 'was refused by the team vault')
  if (error.code === 'forbidden') return ValidationError.field('key', keyMessage)
  if (error.code === 'route_not_found' || error.code === 'not_found') return ValidationError.field('url', 'does not answer as a Tessera team vault')
  return error
}

/** Every channel answered by the team table while connected, else by the embedded one; the clipboard is always local. */
export function routeByConnection(embedded: Omit<DesktopHandlers, 'connection'>, connection: TeamConnection, embeddedStatus: () => Promise<VaultStatus>): DesktopHandlers {
  type Handler = (...args: unknown[]) => Promise<unknown>
  const routed = Object.fromEntries(
    (Object.keys(IPC_METHODS) as Namespace[])
      .filter((namespace) => namespace !== 'connection')
      .map((namespace) => {
        const methods = IPC_METHODS[namespace].map((name: string) => {
          const handler: Handler = (...args) => {
            const table = namespace === 'clipboard' ? embedded : (connection.remote ?? embedded)
            return ((table as Record<string, Record<string, Handler>>)[namespace][name] as Handler)(...args)
          }
          return [name, handler]
        })
        return [namespace, Object.fromEntries(methods)]
      })
  )
  return { ...routed, connection: connection.channels(embeddedStatus) } as DesktopHandlers
}
