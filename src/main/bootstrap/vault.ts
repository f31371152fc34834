/**
 * Creating and opening a vault: the database file, its keys and the first
 * tenant. Used by the CLI, the desktop app and the tests alike.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { MANAGEMENT_PERMISSIONS } from '../../shared/permissions'
import type { Application } from '../../shared/types'
import { CannotUnlockError, VaultAlreadyInitialisedError } from '../domain/errors'
import { newId } from '../crypto/random'
import type { MasterKey } from '../crypto/types'
import { inTransaction } from '../storage/connections'
import { inspectTeamDatabase, openDatabase, requireOwnDatabase, type Database } from '../storage/database'
import type { Logger } from '../infra/logger'
import { insertApplication } from '../storage/repositories/applications.repository'
import { insertApplicationKey } from '../storage/repositories/application-keys.repository'
import { listTenants, insertMember, insertTenant, insertUser } from '../storage/repositories/tenants.repository'
import { awaitVaultCreationTurn, findVault } from '../storage/repositories/vault.repository'
import type { Actor } from '../domain/actor'
import { systemClock, type Clock } from '../app/service-context'
import { createServices, type Services } from './services'
import { newApplicationRecord } from '../app/applications.service'
import { parseCvcRetention } from '../domain/cvc-retention'
import { settleMasterRotation } from '../app/keys.service'
import { AuditChain, GENESIS, openAuditChain } from '../app/audit-chain'
import { createKeyring, unlockKeyring } from '../app/keyring'
import { auditRows } from '../app/audit'
import { insertLogs } from '../storage/repositories/logs.repository'
import type { MailConfig } from '../infra/mail-transport'
import { readSealedSetting } from '../app/sealed-settings.service'
import { readySodium } from '../crypto/sodium'
import { acquireVaultLock, type LockKind } from '../infra/vault-lock'
import { listenForChanges } from '../storage/change-feed'
import { ChangeFollower } from '../app/change-follower'
import type { WebhookDeliveryConfig } from '../app/webhook-delivery'

export const DATABASE_FILE = 'tessera.db'
/** Where the retention sweep and the desktop app write audit archives, inside the data directory. */
export const AUDIT_ARCHIVE_DIR = 'audit-archive'

/**
 * Where a vault's database is: the file in its data directory, or for a team
 * vault the PostgreSQL database its URL names (the data directory then keeps
 * only local things: archives, the master key file).
 */
export function databaseLocation(options: { dataDir: string; databaseUrl?: string }): string {
  return options.databaseUrl ?? join(options.dataDir, DATABASE_FILE)
}

/** A team vault is shared by several processes: no file lock, the database arbitrates. */
function isTeamVault(options: { databaseUrl?: string }): boolean {
  return options.databaseUrl !== undefined
}

export interface InitOptions {
  dataDir: string
  /** A team vault's PostgreSQL URL; the file in `dataDir` when absent. */
  databaseUrl?: string
  /**
   * The vault's master key, or a function making it: that one runs under the
   * vault's lock once no vault was found, so a key is created only for a vault
   * that will use it.
   */
  masterKey: MasterKey | (() => Promise<MasterKey>)
  tenantName: string
  ownerEmail?: string
  clock?: Clock
}

export interface InitResult {
  tenant_id: string
  owner_user_id: string
  application: Required<Pick<Application, 'id' | 'name' | 'type' | 'key' | 'permissions'>>
}

/** Whether the data directory (or the team vault's database) already holds a vault. */
export async function vaultExists(options: { dataDir: string; databaseUrl?: string }): Promise<boolean> {
  if (options.databaseUrl) return (await inspectTeamDatabase(options.databaseUrl)).vault
  if (!existsSync(databaseLocation(options))) return false
  const db = await openDatabase(databaseLocation(options), { readers: 1 })
  try {
    return (await findVault(db.reader)) !== undefined
  } finally {
    await db.close()
  }
}

/**
 * Creates the vault in `dataDir`: keys, the tenant, its OWNER user and a
 * management application holding every management permission, whose key is
 * returned once. Everything is written in one transaction under the vault's
 * lock, so an interrupted init leaves no vault and can simply be run again.
 * @throws VaultAlreadyInitialisedError, VaultInUseError
 */
export async function initVault(options: InitOptions): Promise<InitResult> {
  await readySodium()
  // Checked before taking the lock too, so an existing vault in use is reported as existing.
  await refuseExistingVault(options)
  const lock = isTeamVault(options) ? sharedVault : await acquireVaultLock(options.dataDir, 'init')
  try {
    // Again under a file vault's lock; two team inits are told apart in createVault's transaction.
    if (!isTeamVault(options)) await refuseExistingVault(options)
    const masterKey = typeof options.masterKey === 'function' ? await options.masterKey() : options.masterKey
    return await createVault({ ...options, masterKey })
  } finally {
    await lock.release()
  }
}

/**
 * Where `init` must not create a vault: where one is, and, for a team vault, in a database that
 * holds another application's tables (found before anything is written to it).
 * @throws VaultAlreadyInitialisedError, ForeignDatabaseError
 */
async function refuseExistingVault(options: InitOptions): Promise<void> {
  if (!options.databaseUrl) {
    if (await vaultExists(options)) throw new VaultAlreadyInitialisedError(options.dataDir, false)
    return
  }
  const contents = await inspectTeamDatabase(options.databaseUrl)
  if (contents.vault) throw new VaultAlreadyInitialisedError(options.dataDir, true)
  requireOwnDatabase(contents)
}

async function createVault(options: InitOptions & { masterKey: MasterKey }): Promise<InitResult> {
  const clock = options.clock ?? systemClock
  const db = await openDatabase(databaseLocation(options), { readers: 1 })
  try {
    const now = clock.now()
    const tenantId = newId()
    const userId = newId()
    const permissions = [...MANAGEMENT_PERMISSIONS]
    const application = await inTransaction(db.writer, async (trx) => {
      // Two inits racing on one team database: the second finds the first's vault here and changes nothing.
      await awaitVaultCreationTurn(trx)
      if (await findVault(trx)) throw new VaultAlreadyInitialisedError(options.dataDir, isTeamVault(options))
      const keyring = await createKeyring(trx, options.masterKey, now)
      await insertTenant(trx, { id: tenantId, name: options.tenantName, owner_user_id: userId, created_at: now })
      await keyring.createTenantKeys(trx, tenantId, now)
      await insertUser(trx, { id: userId, email: options.ownerEmail ?? null, first_name: null, last_name: null, picture: null, created_at: now })
      await insertMember(trx, { id: newId(), tenant_id: tenantId, user_id: userId, role: 'OWNER', created_by: userId, created_at: now, modified_by: null, modified_at: null })
      const { row, firstKey } = newApplicationRecord(
        { tenantId, name: 'Tessera administration', type: 'management', permissions, rules: [], expiresAt: null, createdBy: userId },
        keyring.secretHashKey,
        now
      )
      await insertApplication(trx, row)
      await insertApplicationKey(trx, firstKey.record)
      const actor = { id: userId, type: 'user' as const, tenantId }
      const entries = auditRows(now, [
        { actor, entityType: 'tenant', entityId: tenantId, operation: 'create', message: 'Tenant created' },
        { actor, entityType: 'application', entityId: row.id, operation: 'create', message: `Application created with key ${firstKey.record.id}` }
      ])
      // The first entries of the audit chain; the checkpoint vouches for them from the start.
      const chain = new AuditChain(keyring.auditKeys.mac, GENESIS)
      chain.seal(entries, GENESIS)
      await insertLogs(trx, entries)
      await chain.checkpoint(trx)
      return { id: row.id, name: row.name, type: 'management' as const, key: firstKey.key, permissions }
    })
    return { tenant_id: tenantId, owner_user_id: userId, application }
  } finally {
    await db.close()
  }
}

export interface OpenOptions {
  dataDir: string
  /** A team vault's PostgreSQL URL; the file in `dataDir` when absent. */
  databaseUrl?: string
  masterKey: MasterKey
  clock?: Clock
  logger: Logger
  /** SMTP and link settings (see mail.service.ts), or how to build them from the vault's sealed settings. */
  mail?: MailConfigSource
  /** How long a card's CVC is kept; default `TESSERA_CVC_RETENTION`, else one hour (cvc-retention.ts). */
  cvcRetentionMs?: number
  /** Who holds the vault, as `tessera status` reports it; `serve` by default. */
  kind?: Exclude<LockKind, 'init'>
  /** Cap on a session's `expires_at` (see sessions.service.ts). */
  sessionMaxTtlMs?: number
  /** Days audit entries are kept before the `archive-logs` sweep archives them (a function: read at each run); 0 or none keeps them for ever. */
  auditRetentionDays?: number | (() => number)
  /** Webhook delivery: the allow-list (`--webhook-allowed-hosts`), retries and time-outs. */
  webhooks?: WebhookDeliveryConfig
  /** A team vault to migrate that instances of an older version use: how long to wait for them to step aside; 0 or none refuses at once. */
  olderInstancesWaitMs?: number
  /** A team vault: an instance of a newer version asks this one to step aside for its migration (schema `level`). */
  onNewerVersion?: (level: string) => void
}

/** Mail settings, or a function building them with the vault's sealed settings (the desktop's SMTP password). */
export type MailConfigSource = MailConfig | ((readSecret: (name: string) => Promise<string | undefined>) => Promise<MailConfig>)

/** An open vault: its services and how to close it. */
export interface Vault {
  services: Services
  db: Database
  /** The tenant this vault serves (a vault holds one tenant today). */
  tenantId: string
  ownerUserId: string
  /**
   * The desktop user: the tenant OWNER, a member with every permission whose
   * token reads are masked (plaintext only through an explicit, logged reveal).
   */
  owner: Actor
  /** Records where the vault is served, for `tessera status`. */
  recordUrl(url: string): Promise<void>
  close(): Promise<void>
}

/**
 * Opens an initialised vault and holds its lock until closed; a wrong master
 * key fails with CannotUnlockError before any data is touched.
 * @throws CannotUnlockError, VaultInUseError
 */
export async function openVault(options: OpenOptions): Promise<Vault> {
  await readySodium()
  const cvcRetentionMs = options.cvcRetentionMs ?? cvcRetentionFromEnv()
  const file = databaseLocation(options)
  if (!isTeamVault(options) && !existsSync(file)) throw new CannotUnlockError(`no vault in ${options.dataDir}.`, `create one with \`tessera init --data-dir ${options.dataDir}\`.`)
  const lock = isTeamVault(options) ? sharedVault : await acquireVaultLock(options.dataDir, options.kind ?? 'serve')
  const db = await openDatabase(file, { olderInstancesWaitMs: options.olderInstancesWaitMs }).catch(async (error) => {
    await lock.release()
    throw error
  })
  let stopFollowing: (() => Promise<void>) | undefined
  try {
    const clock = options.clock ?? systemClock
    const keyring = await unlockKeyring(db.reader, options.masterKey)
    const [tenant] = await listTenants(db.reader)
    if (!tenant) throw new CannotUnlockError('the vault has no tenant.')
    const chain = await openAuditChain(db.writer, keyring, { shared: isTeamVault(options) })
    const mail = typeof options.mail === 'function' ? await options.mail((name) => readSealedSetting(db.reader, keyring, tenant.id, name)) : options.mail
    const retention = options.auditRetentionDays ?? 0
    const services = createServices({
      db,
      keyring,
      chain,
      tenantId: tenant.id,
      clock,
      logger: options.logger,
      mail,
      cvcRetentionMs,
      sessionMaxTtlMs: options.sessionMaxTtlMs,
      auditArchiveDir: join(options.dataDir, AUDIT_ARCHIVE_DIR),
      auditRetentionDays: typeof retention === 'function' ? retention : () => retention,
      teamVault: isTeamVault(options),
      webhooks: options.webhooks
    })
    await services.webhookEvents.reload()
    const following = options.databaseUrl === undefined ? undefined : followChanges(options.databaseUrl, services, options)
    stopFollowing = following?.stop
    await settleMasterRotation(services.context.writes, keyring, clock.now())
    return {
      services,
      db,
      tenantId: tenant.id,
      ownerUserId: tenant.owner_user_id ?? '',
      owner: { type: 'user', id: tenant.owner_user_id ?? '', tenantId: tenant.id, isMember: true, permissions: [], rules: [] },
      recordUrl: (url) => lock.recordUrl(url),
      async close() {
        try {
          // Refused requests counted so far, and the chain's checkpoint, are written before the database closes.
          await services.denials.flush()
          await services.logs.checkpoint()
        } finally {
          await following?.stop()
          await services.context.writes.idle()
          await db.close()
          await lock.release()
        }
      }
    }
  } catch (error) {
    await stopFollowing?.()
    await db.close()
    await lock.release()
    throw error
  }
}

/** How long the database may take to answer a health check before the instance reports itself unavailable. */
const HEALTH_PING_TIMEOUT_MS = 2000

/** A team vault's instance hears the changes the others make (app/change-follower.ts), on a connection that also tells its health. */
function followChanges(databaseUrl: string, services: Services, { logger, onNewerVersion }: OpenOptions): { stop(): Promise<void> } {
  const follower = new ChangeFollower({ ...services, keyring: services.context.keyring, reader: services.context.reader, logger, onNewerVersion })
  const listener = listenForChanges(databaseUrl, follower)
  follower.start()
  services.health.watch(() => listener.ping(HEALTH_PING_TIMEOUT_MS))
  return {
    async stop() {
      await listener.close()
      await follower.stop()
    }
  }
}

/** A team vault's instances share it: nothing to lock or record locally. */
const sharedVault = { recordUrl: async () => undefined, release: async () => undefined }

/** A vault never opens under a CVC retention it cannot read: it would keep CVCs longer than meant. */
function cvcRetentionFromEnv(): number {
  try {
    return parseCvcRetention(process.env.TESSERA_CVC_RETENTION)
  } catch (error) {
    throw new CannotUnlockError((error as Error).message)
  }
}
