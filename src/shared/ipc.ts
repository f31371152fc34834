/**
 * The one IPC contract between the renderer and the main process.
 *
 * `TesseraApi` is what the renderer programs against. The preload exposes it
 * as `window.tessera` with every result wrapped in an `IpcResult` (errors do
 * not survive `ipcRenderer.invoke` with their fields, so they cross as data);
 * the renderer's `api/` module unwraps it again. Main registers one handler per
 * channel of `IPC_CHANNELS`, validates the payload and calls the same services
 * as the REST server with the desktop user (the tenant OWNER) as actor.
 *
 * Besides `IPC_METHODS` and the two channel helpers this file has no runtime
 * code, so the renderer may import its types freely.
 */
import type { z } from 'zod'
import type * as contract from './contracts'
import type { OutboxMail } from './contracts'
import type {
  Application,
  ApplicationKey,
  EntityType,
  KeyRetirementReport,
  KeyStatus,
  LogEntry,
  MasterKeyRotated,
  Page,
  Problem,
  Session,
  SessionCreated,
  TenantInvitation,
  TenantMember,
  Token,
  Webhook,
  WebhookDelivery
} from './types'

// Queries and bodies: the contracts' (./contracts); main parses what the
// renderer sends with the same schemas.

/** A query as the renderer holds it: the contract's parsed form (numbers, arrays), every field optional. */
type QueryOf<S extends z.ZodType> = Partial<z.output<S>>

export type PageQuery = QueryOf<typeof contract.listSessionsQuery>
export type TokenListQuery = QueryOf<typeof contract.listTokensQuery>
/** Log filters: dates as ISO 8601 text (the contract turns them into epoch ms). */
export type LogFilterQuery = Omit<QueryOf<typeof contract.logFiltersQuery>, 'start_date' | 'end_date'> &
  Pick<z.input<typeof contract.logFiltersQuery>, 'start_date' | 'end_date'>
export type LogListQuery = LogFilterQuery & PageQuery
export type ApplicationListQuery = QueryOf<typeof contract.listApplicationsQuery>
export type MemberListQuery = QueryOf<typeof contract.listMembersQuery>
export type InvitationListQuery = QueryOf<typeof contract.listInvitationsQuery>
export type OutboxListQuery = QueryOf<typeof contract.listOutboxQuery>
export type { OutboxMail } from './contracts'
export type CreateApplicationRequest = z.input<typeof contract.createApplicationRequest>
export type UpdateApplicationRequest = z.input<typeof contract.updateApplicationRequest>
export type AuthorizeSessionRequest = z.input<typeof contract.authorizeSessionBody>
export type CreateInvitationRequest = z.input<typeof contract.createInvitationBody>
export type WebhookListQuery = QueryOf<typeof contract.listWebhooksQuery>
export type WebhookDeliveryListQuery = QueryOf<typeof contract.listWebhookDeliveriesQuery>
/** `{name, url, events, notify_email?}`: create, and update (which replaces every field). */
export type WebhookRequest = z.input<typeof contract.webhookBody>

/** Where the vault's master key is kept. */
export type KeyStorage = 'keychain' | 'key-file' | 'environment'

export interface ServiceStatus {
  running: boolean
  /** `http://127.0.0.1:<port>` while running. */
  url?: string
  /** Why the service is not running, safe to show. */
  error?: string
}

/** What the shell shows before and around the vault. */
export interface VaultStatus {
  /** `setup`: no vault yet; `locked`: closed (or could not open); `unlocked`: open and serving. */
  state: 'setup' | 'locked' | 'unlocked'
  dataDir: string
  keyStorage?: KeyStorage
  /** Whether the OS keychain (Electron safeStorage) can protect the master key here. */
  keychainAvailable: boolean
  service: ServiceStatus
  tenantId?: string
  ownerUserId?: string
  /** Why the vault could not be opened, safe to show. */
  error?: string
  version: string
  /** While unlocked: the idle lock's setting, and when the vault locks if the computer stays idle (ISO 8601). */
  idleLock?: { minutes: number; lockAt?: string }
  /** Set while the window is on a team vault: every view's calls then go to that server. */
  team?: TeamVaultConnection
}

/** The team vault the window is on: a `tessera serve` reached over REST with a management key. */
export interface TeamVaultConnection {
  kind: 'team'
  /** The server's base URL, as entered (no credentials). */
  url: string
  /** The URL's host (and port), for the indicator. */
  host: string
  tenantId?: string
  tenantName?: string
  /** Whether the key is kept in the OS keychain for the next start (false without a keychain: this session only). */
  remembered: boolean
  /** Set when the server's certificate is checked against the CA certificate given with the connection, and no other CA. */
  privateCa?: true
  /** Why the server could not be reached on the last try, safe to show. */
  error?: string
}

/** Which vault the window is on. */
export type VaultConnection = { kind: 'embedded' } | TeamVaultConnection

/** What the connection form sends; the key never comes back. */
export interface ConnectTeamRequest {
  /** `https://…` (plain `http://` only to this computer). */
  url: string
  /** The team vault's management key, as `tessera init` printed it. */
  key: string
  /** For a server whose certificate comes from a private CA: that CA's certificate, PEM (https only, at most 64 KiB). */
  caCertificate?: string
}

export type CreateVaultRequest = z.input<typeof contract.createVaultRequest>

/** The management application made with the vault; its key is shown once. */
export interface VaultCreated {
  status: VaultStatus
  application: { id: string; name: string; key: string }
}

export interface SmtpSettings {
  host: string
  port: number
  /** TLS from the start (port 465); otherwise STARTTLS. */
  secure: boolean
  /** Without `secure`: refuse to send unless the server upgrades with STARTTLS (default true); false may send in the clear. */
  requireTLS?: boolean
  user?: string
  /**
   * Write-only: `settings.get` never returns it, only `hasPassword`. Changing
   * `host` or `user` drops the stored password unless a new one is given.
   */
  password?: string
  hasPassword?: boolean
  from: string
}

export interface DesktopSettings {
  /** Loopback port of the REST service. */
  port: number
  /** Minutes of system idleness after which the vault locks itself (1–480; default 15). */
  idleLockMinutes: number
  /** Days audit entries are kept before they are archived to the archive folder and pruned (0–36500; 0, the default: for ever). */
  auditRetentionDays: number
  /** Base URL used in invitation links. */
  publicBaseUrl?: string
  smtp?: SmtpSettings
}

/** An audit archive: the entries created before `before` moved into `file` (a signed export) and pruned from the vault. */
export interface AuditArchive {
  /** Full path of the archive file. */
  file: string
  entries: number
  firstSeq: number
  lastSeq: number
  /** Hex SHA-256 of the file, as the audit log records it. */
  sha256: string
  /** ISO 8601. */
  before: string
  archivedAt: string
}

export interface AuditArchiveStatus {
  /** Where archives go: `<data folder>/audit-archive`. */
  directory: string
  retentionDays: number
  /** The last archive since the vault was unlocked (by hand or by the retention job). */
  last: AuditArchive | null
}

/** A partial settings change; `smtp: null` removes the SMTP configuration. */
export interface SettingsPatch {
  port?: number
  idleLockMinutes?: number
  auditRetentionDays?: number
  publicBaseUrl?: string | null
  smtp?: SmtpSettings | null
}

/**
 * Everything the renderer may ask of the main process. Every method returns a
 * Promise; failures reject with a `ProblemError` carrying the service's problem.
 */
export interface TesseraApi {
  // Vault and shell
  vault: {
    status(): Promise<VaultStatus>
    create(request: CreateVaultRequest): Promise<VaultCreated>
    unlock(): Promise<VaultStatus>
    /** Stops the REST service, closes the database and forgets the keys. */
    lock(): Promise<VaultStatus>
    /** The user is here (the idle warning's "Stay unlocked"): the idle lock starts counting again. */
    reportActivity(): Promise<VaultStatus>
  }
  settings: {
    get(): Promise<DesktopSettings>
    /** Saves and applies: a new port or SMTP configuration restarts the service. */
    update(patch: SettingsPatch): Promise<DesktopSettings>
  }
  // Tokens
  tokens: {
    list(query: TokenListQuery): Promise<Page<Token>>
    get(id: string): Promise<Token>
    create(body: Record<string, unknown>): Promise<Token>
    /** RFC 7386 merge patch. */
    update(id: string, patch: Record<string, unknown>): Promise<Token>
    delete(id: string): Promise<void>
    /** The plaintext, for the screen only; the reason goes to the audit log. */
    reveal(id: string, reason: string): Promise<Token>
  }
  tokenize: {
    /** `POST /tokenize`: same structure back, values replaced by ids or token objects. */
    run(body: unknown): Promise<unknown>
  }
  // Administration
  logs: {
    list(query: LogListQuery): Promise<Page<LogEntry>>
    entityTypes(): Promise<EntityType[]>
    /** Entries per `[start, end)` period (epoch ms) for the activity chart; the whole chart is one audited read. */
    activity(query: LogFilterQuery, periods: [number, number][]): Promise<number[]>
    /** Every entry matching the filters, newest first, up to 10,000: the CSV export, audited as one export. */
    export(query: LogFilterQuery): Promise<LogEntry[]>
    /** Archives the entries created before `before` (ISO 8601, not in the future) into the archive folder, then prunes them; null when there were none. Logged. */
    archive(before: string): Promise<AuditArchive | null>
    /** The archive folder, the retention and the last archive. */
    archiveStatus(): Promise<AuditArchiveStatus>
  }
  applications: {
    list(query: ApplicationListQuery): Promise<Page<Application>>
    get(id: string): Promise<Application>
    create(body: CreateApplicationRequest): Promise<Application>
    update(id: string, body: UpdateApplicationRequest): Promise<Application>
    regenerate(id: string): Promise<Application>
    delete(id: string): Promise<void>
    /** The application's keys, oldest first, without values. */
    listKeys(id: string): Promise<ApplicationKey[]>
    /** One more key, its value shown in this result only; the other keys keep working. */
    createKey(id: string): Promise<ApplicationKey>
    /** That key stops working at once; the other keys stay. */
    deleteKey(id: string, keyId: string): Promise<void>
  }
  sessions: {
    /** Creates a session as the given public application (testing and training); with its id, unlike REST. */
    create(applicationId: string): Promise<SessionCreated & { id: string }>
    /** Authorizes a session's nonce as the given private application. */
    authorize(applicationId: string, body: AuthorizeSessionRequest): Promise<void>
    /** The tenant's sessions that have not expired, newest first (never their keys). Logged. */
    list(query: PageQuery): Promise<Page<Session>>
    /** Ends a session at once: its key is refused from then on. Logged. */
    revoke(id: string): Promise<void>
  }
  members: {
    list(query: MemberListQuery): Promise<Page<TenantMember>>
    delete(id: string): Promise<void>
  }
  invitations: {
    list(query: InvitationListQuery): Promise<Page<TenantInvitation>>
    create(body: CreateInvitationRequest): Promise<TenantInvitation>
    resend(id: string): Promise<TenantInvitation>
    delete(id: string): Promise<void>
  }
  outbox: {
    list(query: OutboxListQuery): Promise<Page<OutboxMail>>
  }
  webhooks: {
    /** Oldest first (at most 5 per tenant). */
    list(query: WebhookListQuery): Promise<Page<Webhook>>
    get(id: string): Promise<Webhook>
    /** A sixth webhook is refused (422); unknown event types are a 400 naming `events[i]`. */
    create(body: WebhookRequest): Promise<Webhook>
    /** Replaces name, URL, notify e-mail and events. */
    update(id: string, body: WebhookRequest): Promise<Webhook>
    /** Its pending deliveries and its delivery log go with it. */
    delete(id: string): Promise<void>
    /** Every event type a webhook may subscribe to. */
    eventTypes(): Promise<string[]>
    /** The webhook's deliveries, newest first, each with its attempts (status code, duration, error, blocked). */
    deliveries(id: string, query: WebhookDeliveryListQuery): Promise<Page<WebhookDelivery>>
  }
  clipboard: {
    /**
     * Puts a secret (a key, nonce or invitation link) on the system clipboard
     * and clears it 30 seconds later if the clipboard still holds it.
     */
    copySecret(text: string): Promise<void>
  }
  // Which vault the window is on: the embedded one, or a team vault over REST.
  connection: {
    current(): Promise<VaultConnection>
    /** Tests the key against the server, keeps it in the OS keychain, and moves the window onto the team vault. */
    connect(request: ConnectTeamRequest): Promise<VaultConnection>
    /** Back to the embedded vault; the kept key is forgotten. */
    disconnect(): Promise<VaultConnection>
  }
  // Key ceremonies (Settings): the same as `tessera keys`, audited as the desktop user.
  keys: {
    /** Data-key versions, what each seals, and the latest rotation's progress. */
    status(): Promise<KeyStatus>
    /** Creates a new data-key version; new writes use it at once, a background pass re-encrypts the rest. */
    rotate(): Promise<KeyStatus>
    /** Deletes a data-key version nothing uses any more (409 naming what still does); returns the report. */
    retire(version: number): Promise<KeyRetirementReport>
    /** The report kept when a version was retired. */
    report(version: number): Promise<KeyRetirementReport>
    /** Re-wraps every key under a new master key, stored where the current one is (OS keychain or key file). */
    rotateMaster(): Promise<MasterKeyRotated>
  }
}

export type Namespace = keyof TesseraApi
export type MethodOf<N extends Namespace> = keyof TesseraApi[N] & string

type MethodTable = { readonly [N in Namespace]: readonly MethodOf<N>[] }

/** Every method of the contract, by namespace: the runtime twin of `TesseraApi`. */
export const IPC_METHODS = {
  vault: ['status', 'create', 'unlock', 'lock', 'reportActivity'],
  settings: ['get', 'update'],
  tokens: ['list', 'get', 'create', 'update', 'delete', 'reveal'],
  tokenize: ['run'],
  logs: ['list', 'entityTypes', 'activity', 'export', 'archive', 'archiveStatus'],
  applications: ['list', 'get', 'create', 'update', 'regenerate', 'delete', 'listKeys', 'createKey', 'deleteKey'],
  sessions: ['create', 'authorize', 'list', 'revoke'],
  members: ['list', 'delete'],
  invitations: ['list', 'create', 'resend', 'delete'],
  outbox: ['list'],
  webhooks: ['list', 'get', 'create', 'update', 'delete', 'eventTypes', 'deliveries'],
  clipboard: ['copySecret'],
  keys: ['status', 'rotate', 'retire', 'report', 'rotateMaster'],
  connection: ['current', 'connect', 'disconnect']
} as const satisfies MethodTable

// Compile-time proof that IPC_METHODS lists every method of TesseraApi.
type Unlisted = { [N in Namespace]: Exclude<MethodOf<N>, (typeof IPC_METHODS)[N][number]> }[Namespace]
const everyMethodListed: [Unlisted] extends [never] ? true : Unlisted = true
void everyMethodListed

/** Every channel starts with this, so main can reject anything else before looking further. */
export const CHANNEL_PREFIX = 'app:'

export type Channel = { [N in Namespace]: `app:${N}.${(typeof IPC_METHODS)[N][number]}` }[Namespace]

/** The channel of one method, e.g. `app:tokens.list`. */
export function channelOf(namespace: Namespace, method: string): Channel {
  return `${CHANNEL_PREFIX}${namespace}.${method}` as Channel
}

/** Every channel of the contract. */
export const IPC_CHANNELS: readonly Channel[] = (Object.keys(IPC_METHODS) as Namespace[]).flatMap((namespace) =>
  IPC_METHODS[namespace].map((method: string) => channelOf(namespace, method))
)

/** How a result crosses IPC: plain data, so problems keep their status and field errors. */
export type IpcResult<T> = { ok: true; value: T } | { ok: false; problem: Problem }

/** `window.tessera`: the contract with every result wrapped in an `IpcResult`. */
export type TesseraBridge = {
  [N in Namespace]: {
    [M in MethodOf<N>]: TesseraApi[N][M] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Promise<IpcResult<R>> : never
  }
}
