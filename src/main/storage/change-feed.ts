/**
 * The change feed of a team vault: several instances share one PostgreSQL
 * database and each caches credentials, token rows and keys in memory. A write
 * that makes such a cache wrong announces itself with `pg_notify` in its own
 * transaction (delivered at commit, dropped on rollback), and every instance
 * listens on a dedicated connection to evict what changed. The payload names
 * only kinds and ids: never a secret, never token data. On SQLite (one process
 * owns the file) nothing is sent.
 *
 * The same connection hears upgrades: an instance of a newer version, about to
 * migrate the database, asks the instances of older versions to step aside.
 */
import type { Knex } from 'knex'
import { Client } from 'pg'
import { sql, type Db } from './connections'
import { engineOf, schemaApplicationName } from './dialect'
import { SCHEMA_LEVEL } from './migrations'
import { settlesWithin } from '../../shared/settles-within'

export const CHANGE_CHANNEL = 'tessera_changes'
/** Where a newer version names the schema level it is about to migrate to. */
export const UPGRADE_CHANNEL = 'tessera_upgrades'

/** What changed: API keys of applications or sessions, token rows of a tenant, the vault's keys, or webhook subscriptions. */
export type ChangeKind = 'application' | 'session' | 'token' | 'keys' | 'webhook'

export interface Change {
  kind: ChangeKind
  /** The tenant of token ids. */
  tenantId?: string
  /** The ids that changed; absent: every cached entry of the kind. */
  ids?: string[]
}

/** PostgreSQL refuses payloads of 8000 bytes or more; a longer list of ids becomes "every entry of the kind". */
const MAX_PAYLOAD_BYTES = 7000

/** Announces `change` to every instance once the transaction of `db` commits. */
export async function notifyChange(db: Db, change: Change): Promise<void> {
  if (engineOf(sql(db)) !== 'postgres') return
  if (change.ids?.length === 0) return
  let payload = JSON.stringify(change)
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) payload = JSON.stringify({ kind: change.kind, tenantId: change.tenantId })
  await sql(db).raw('SELECT pg_notify(?, ?)', [CHANGE_CHANNEL, payload])
}

/** Asks every instance of an older version to step aside: this one is about to migrate the database to its schema level. */
export async function askOlderInstancesToStepAside(db: Knex): Promise<void> {
  await db.raw('SELECT pg_notify(?, ?)', [UPGRADE_CHANNEL, SCHEMA_LEVEL])
}

/** The schema level an upgrade announces, when it is newer than this version's; anything else is ignored. */
function newerLevel(payload: string | undefined): string | undefined {
  return payload !== undefined && /^\d{14}$/.test(payload) && payload > SCHEMA_LEVEL ? payload : undefined
}

/**
 * Whether the backend that sent an upgrade notice is a newer Tessera instance of this vault: connected to
 * this database as this instance's role or as the role that owns the vault's tables, and named for the
 * schema level it announces. Any role that may connect can send a NOTIFY; only those roles can migrate.
 */
async function isNewerInstance(client: Client, processId: number, level: string): Promise<boolean> {
  const { rows } = await client
    .query<{ newer: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND datname = current_database() AND application_name = $2
         AND (usename = current_user OR usename = (SELECT tableowner FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'logs'))) AS newer`,
      [processId, schemaApplicationName(level)]
    )
    .catch(() => ({ rows: [{ newer: false }] })) // the connection is lost: the notice is sent again while the upgrade waits
  return rows[0].newer
}

const KINDS: readonly string[] = ['application', 'session', 'token', 'keys', 'webhook'] satisfies ChangeKind[]

/** A payload as a Change; anything else (another version's format) as "every kind changed". */
export function parseChange(payload: string | undefined): Change[] {
  try {
    const value = JSON.parse(payload ?? '') as Partial<Change>
    if (typeof value.kind === 'string' && KINDS.includes(value.kind)) {
      const ids = Array.isArray(value.ids) && value.ids.every((id) => typeof id === 'string') ? value.ids : undefined
      return [{ kind: value.kind, tenantId: typeof value.tenantId === 'string' ? value.tenantId : undefined, ids }]
    }
  } catch {
    // Unreadable: fall through and evict everything, which is always safe.
  }
  return KINDS.map((kind) => ({ kind: kind as ChangeKind }))
}

export interface ChangeHandlers {
  onChange(change: Change): void
  /** Listening (again): changes made while disconnected were missed. */
  onConnected(): void
  /** The connection is lost: notifications may be missed until onConnected. */
  onDisconnected(error: Error | undefined): void
  /** An instance of a newer version (its schema `level`) asks this one to step aside for its migrations. */
  onNewerVersion?(level: string): void
}

export interface ChangeListener {
  close(): Promise<void>
  /**
   * Whether the listening connection answers a query within `timeoutMs`: the instance's way
   * to the database, kept open whatever the load. One that does not answer is dropped and
   * opened again (a connection cut off without a word would otherwise wait on TCP for hours).
   */
  ping(timeoutMs: number): Promise<boolean>
}

/** How the listening connections show in `pg_stat_activity`. */
const LISTENER_NAME = 'tessera-changes'
const FIRST_RETRY_MS = 100
const LAST_RETRY_MS = 5000

/**
 * Listens for changes on a connection of its own (not from the pool: LISTEN
 * belongs to a session), reconnecting with exponential backoff when it is lost.
 */
export function listenForChanges(url: string, handlers: ChangeHandlers): ChangeListener {
  let client: Client | undefined
  let closed = false
  let connected = false
  let retryMs = FIRST_RETRY_MS
  let retry: NodeJS.Timeout | undefined
  /** The latest connection attempt (settled once it has connected or failed). */
  let connecting: Promise<void>

  const lost = (error?: Error) => {
    if (client) client.removeAllListeners().on('error', () => undefined)
    void client?.end().catch(() => undefined)
    client = undefined
    if (connected) handlers.onDisconnected(error)
    connected = false
    if (closed) return
    retry = setTimeout(() => void (connecting = connect()), retryMs)
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS)
  }

  const connect = async () => {
    retry = undefined
    const next = new Client({ connectionString: url, keepAlive: true, application_name: LISTENER_NAME })
    client = next
    next.on('notification', (message) => {
      if (message.channel === CHANGE_CHANNEL) for (const change of parseChange(message.payload)) handlers.onChange(change)
      const level = message.channel === UPGRADE_CHANNEL ? newerLevel(message.payload) : undefined
      if (level && handlers.onNewerVersion) void isNewerInstance(next, message.processId, level).then((newer) => newer && handlers.onNewerVersion?.(level))
    })
    next.on('error', (error) => lost(error))
    next.on('end', () => client === next && lost())
    try {
      await next.connect()
      await next.query(`LISTEN ${CHANGE_CHANNEL}; LISTEN ${UPGRADE_CHANNEL}`)
    } catch (error) {
      if (client === next) lost(error as Error)
      return
    }
    if (closed || client !== next) return
    connected = true
    retryMs = FIRST_RETRY_MS
    handlers.onConnected()
  }

  connecting = connect()
  return {
    async ping(timeoutMs) {
      let asked: Client | undefined
      const answering = (async () => {
        // Starting, or connecting again: the attempt under way may still make it in time.
        if (!connected) await connecting
        asked = connected ? client : undefined
        return asked ? asked.query('SELECT 1').then(() => true, () => false) : false
      })()
      const answered = (await settlesWithin(answering, timeoutMs)) && (await answering)
      if (!answered && asked && client === asked) lost(new Error('the database did not answer in time'))
      return answered
    },
    async close() {
      closed = true
      if (retry) clearTimeout(retry)
      const last = client
      client = undefined
      connected = false
      if (last) {
        last.removeAllListeners().on('error', () => undefined)
        await last.end().catch(() => undefined)
      }
    }
  }
}
