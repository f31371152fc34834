/**
 * The database through knex: one writer connection (all writes go through the
 * WriteQueue) and a small pool of readers. SQLite is the embedded default (WAL
 * lets the readers run alongside the writer); a team vault is a PostgreSQL
 * database named by its URL (see dialect.ts for what differs).
 */
import { closeSync, openSync } from 'node:fs'
import knex, { type Knex } from 'knex'
import { isPostgresUrl, lockUntilCommit, MIGRATION_LOCK, postgresConnection, SCHEMA_APPLICATION_NAME } from './dialect'
import { readerOf, writerOf, type Reader, type Writer } from './connections'
import { migrationSource } from './migrations'
import { loadTenantKeys } from './tenant-keys'

/** Pragmas applied to every connection. */
const CONNECTION_PRAGMAS = [
  'PRAGMA foreign_keys = ON',
  'PRAGMA busy_timeout = 5000',
  // Erased ciphertext is overwritten, not left in free pages.
  'PRAGMA secure_delete = ON',
  // A commit acknowledged to a caller survives power loss: a vault must not lose tokens it handed out.
  'PRAGMA synchronous = FULL'
]

export interface Database {
  /** The single connection every write goes through. */
  writer: Writer
  /** A pool of read-only connections. */
  reader: Reader
  close(): Promise<void>
}

/**
 * knex would print connection failures itself, stack and all, on the console;
 * they reach the caller as errors anyway, which reports them its own way.
 */
const SILENT_LOG = { warn() {}, error() {}, deprecate() {}, debug() {} }

type RawConnection = { exec(sql: string, done: (error: Error | null) => void): void }

function connect(filename: string, poolSize: number): Knex {
  return knex({
    client: 'sqlite3',
    connection: { filename },
    log: SILENT_LOG,
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: poolSize,
      afterCreate(connection: RawConnection, done: (error: Error | null, connection: RawConnection) => void) {
        connection.exec(CONNECTION_PRAGMAS.join(';'), (error) => done(error, connection))
      }
    },
    migrations: { migrationSource }
  })
}

/** Opens the database (a file, created if needed, or a PostgreSQL URL) and brings its schema up to date. */
export async function openDatabase(location: string, options: { readers?: number } = {}): Promise<Database> {
  return isPostgresUrl(location) ? openPostgres(location, options.readers ?? 2) : openSqlite(location, options.readers ?? 2)
}

async function openSqlite(filename: string, readers: number): Promise<Database> {
  // Create the file owner-only before SQLite does; its -wal and -shm files inherit the mode.
  closeSync(openSync(filename, 'a', 0o600))
  const writer = connect(filename, 1)
  return assemble(writer, {
    async prepare() {
      await writer.raw('PRAGMA journal_mode = WAL')
      await writer.migrate.latest()
    },
    openReader: () => connect(filename, readers),
    // Fold the WAL back into the main file so a closed vault is one file.
    beforeClose: () => writer.raw('PRAGMA wal_checkpoint(TRUNCATE)').catch(() => undefined)
  })
}

/** Brings the writer's schema up to date, opens the readers, and closes both in order; a failed preparation closes the writer. */
async function assemble(writer: Knex, steps: { prepare(): Promise<void>; openReader(): Knex; beforeClose?(): Promise<unknown> }): Promise<Database> {
  try {
    await steps.prepare()
  } catch (error) {
    await writer.destroy()
    throw error
  }
  const reader = steps.openReader()
  await loadTenantKeys(writer, reader)
  return {
    writer: writerOf(writer),
    reader: readerOf(reader),
    async close() {
      await reader.destroy()
      await steps.beforeClose?.()
      await writer.destroy()
    }
  }
}

/** Instances of an older Tessera version are connected to the team database that this one would migrate. */
class OlderInstancesConnectedError extends Error {
  /** What the CLI reports it by (cli/failures.ts). */
  readonly code = 'OLDER_INSTANCES_CONNECTED'
  constructor(count: number) {
    super(`Instances of an older Tessera version are connected to the team database (${count}), which this version would migrate under them.`)
    this.name = 'OlderInstancesConnectedError'
  }
}

/**
 * Refuses to migrate a team database while instances of an older version use it: they would go
 * on writing as that version did (without the rows of an index a migration adds). Instances
 * name their schema in `application_name`; those of this level (starting together) do not count.
 */
async function refuseUnderOlderInstances(writer: Knex): Promise<void> {
  const [, pending] = (await writer.migrate.list()) as [unknown[], unknown[]]
  if (pending.length === 0) return
  const { rows } = await writer.raw(
    `SELECT count(*) AS count FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'tessera schema %' AND application_name < ? AND pid <> pg_backend_pid()`,
    [SCHEMA_APPLICATION_NAME]
  )
  const count = Number(rows[0].count)
  if (count > 0) throw new OlderInstancesConnectedError(count)
}

function connectPostgres(url: string, poolSize: number): Knex {
  return knex({ client: 'pg', connection: postgresConnection(url), log: SILENT_LOG, pool: { min: 1, max: poolSize }, migrations: { migrationSource } })
}

async function openPostgres(url: string, readers: number): Promise<Database> {
  const writer = connectPostgres(url, 1)
  return assemble(writer, { prepare: () => migrateAlone(url, writer), openReader: () => connectPostgres(url, readers) })
}

/**
 * Instances starting together would run the migrations together, and knex
 * refuses the second run outright: each waits for an advisory lock instead.
 */
async function migrateAlone(url: string, writer: Knex): Promise<void> {
  const lock = connectPostgres(url, 1)
  try {
    await lock.transaction(async (trx) => {
      await lockUntilCommit(trx, MIGRATION_LOCK)
      await refuseUnderOlderInstances(writer)
      await writer.migrate.latest()
    })
  } finally {
    await lock.destroy()
  }
}
