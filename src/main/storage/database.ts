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
import { isKnownMigration, levelOf, migrationSource, SCHEMA_LEVEL } from './migrations'
import { askOlderInstancesToStepAside } from './change-feed'
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
    migrations: MIGRATIONS
  })
}

/** knex's own check of the list of applied migrations is replaced by `migrateToLatest`'s, which says what it means. */
const MIGRATIONS = { migrationSource, disableMigrationsListValidation: true }

export interface OpenDatabaseOptions {
  readers?: number
  /**
   * A team database that instances of an older version still use: how long to ask them to step
   * aside (change-feed.ts) and wait for them to go before migrating it. 0, the default, refuses at once.
   */
  olderInstancesWaitMs?: number
}

/**
 * Opens the database (a file, created if needed, or a PostgreSQL URL) and brings its schema up to date.
 * @throws NewerSchemaError, OlderInstancesConnectedError
 */
export async function openDatabase(location: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  const readers = options.readers ?? 2
  return isPostgresUrl(location) ? openPostgres(location, readers, options.olderInstancesWaitMs ?? 0) : openSqlite(location, readers)
}

/** The database was migrated by a newer version of Tessera, whose schema this one does not know. */
class NewerSchemaError extends Error {
  /** What the CLI reports it by (cli/failures.ts). */
  readonly code = 'NEWER_SCHEMA'
  constructor(readonly level: string) {
    super(`The database was migrated by a newer version of Tessera (schema ${level}); this version writes schema ${SCHEMA_LEVEL}.`)
    this.name = 'NewerSchemaError'
  }
}

/**
 * Applies the migrations this version has and the database lacks, after `beforeMigrating` when there
 * are any; with none, knex is not asked again (its `latest` would read the list and its lock table anew).
 * @throws NewerSchemaError when the database holds a migration this version does not know
 */
async function migrateToLatest(writer: Knex, beforeMigrating?: () => Promise<void>): Promise<void> {
  const [applied, pending] = (await writer.migrate.list()) as [Array<{ name: string }>, unknown[]]
  const newest = applied.map(({ name }) => name).filter((name) => !isKnownMigration(name)).sort().at(-1)
  if (newest) throw new NewerSchemaError(levelOf(newest))
  if (pending.length === 0) return
  await beforeMigrating?.()
  await writer.migrate.latest()
}

async function openSqlite(filename: string, readers: number): Promise<Database> {
  // Create the file owner-only before SQLite does; its -wal and -shm files inherit the mode.
  closeSync(openSync(filename, 'a', 0o600))
  const writer = connect(filename, 1)
  return assemble(writer, {
    async prepare() {
      await writer.raw('PRAGMA journal_mode = WAL')
      await migrateToLatest(writer)
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
  constructor(count: number, waitedMs: number) {
    const waited = waitedMs > 0 ? ` after ${Math.round(waitedMs / 1000)} s of asking them to step aside` : ''
    super(`Instances of an older Tessera version are still connected to the team database (${count})${waited}; this version would migrate it under them.`)
    this.name = 'OlderInstancesConnectedError'
  }
}

/** How often an upgrade asks older instances to step aside and counts those still connected. */
const STEP_ASIDE_POLL_MS = 250

/**
 * Connections of instances (and commands) of an older version: each names its schema in `application_name`.
 * One waiting for its turn at the migrations (the lock this one holds) does not count: an older instance
 * starting meanwhile has written nothing yet, and once it has the turn it finds the newer schema and refuses.
 */
async function olderConnections(writer: Knex): Promise<number> {
  const { rows } = await writer.raw(
    `SELECT count(*) AS count FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'tessera schema %' AND application_name < ? AND pid <> pg_backend_pid()
        AND pid NOT IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = 0 AND objid = ? AND objsubid = 1)`,
    [SCHEMA_APPLICATION_NAME, MIGRATION_LOCK]
  )
  return Number(rows[0].count)
}

/**
 * Migrating a team database under instances of an older version would leave them writing as that
 * version did (without the rows of an index a migration adds): they are asked to step aside, and
 * the migration waits up to `waitMs` for their connections to close. Instances of this level,
 * starting together, do not count.
 * @throws OlderInstancesConnectedError
 */
async function awaitOlderInstances(writer: Knex, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const count = await olderConnections(writer)
    if (count === 0) return
    if (Date.now() >= deadline) throw new OlderInstancesConnectedError(count, waitMs)
    await askOlderInstancesToStepAside(writer)
    await new Promise((resolve) => setTimeout(resolve, Math.min(STEP_ASIDE_POLL_MS, deadline - Date.now())))
  }
}

/** The tables knex keeps its migration list in (created by any knex call that reads the list). */
const MIGRATION_TABLES = new Set(['knex_migrations', 'knex_migrations_lock'])

/** A team database holds tables of something other than Tessera: a vault is not created among them. */
class ForeignDatabaseError extends Error {
  /** What the CLI reports it by (cli/failures.ts). */
  readonly code = 'FOREIGN_DATABASE'
  constructor(tables: string[]) {
    const named = tables.slice(0, 3).join(', ') + (tables.length > 3 ? ` and ${tables.length - 3} more` : '')
    super(`The database holds tables that are not Tessera's (${named}); a team vault needs a database of its own.`)
    this.name = 'ForeignDatabaseError'
  }
}

/** What a team database holds, as far as opening it goes. */
export interface TeamDatabaseContents {
  /** A vault is there (or a newer version's schema, which opening the database reports). */
  vault: boolean
  /** Tables of something else, where no Tessera schema is: sorted, empty otherwise. */
  foreignTables: string[]
}

/**
 * Looks at a team database without writing to it: opening it would migrate it, and knex creates its
 * migration tables even to list what is applied, so a mistyped URL would fill another application's
 * database with Tessera's tables. Looks in the connection's current schema, where Tessera's would be.
 */
export async function inspectTeamDatabase(url: string): Promise<TeamDatabaseContents> {
  const db = connectPostgres(url, 1)
  try {
    const { rows } = (await db.raw('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()')) as { rows: { name: string }[] }
    const tables = new Set(rows.map((row) => row.name))
    const applied: string[] = tables.has('knex_migrations') ? await db('knex_migrations').pluck('name') : []
    if (applied.some(isKnownMigration)) {
      const newerSchema = applied.some((name) => !isKnownMigration(name))
      const vault = tables.has('vault') && (await db('vault').select(db.raw('1')).first()) !== undefined
      return { vault: vault || newerSchema, foreignTables: [] }
    }
    return { vault: false, foreignTables: [...tables].filter((name) => !MIGRATION_TABLES.has(name)).sort() }
  } finally {
    await db.destroy()
  }
}

/**
 * A team database a vault may be created in: one holding no tables but knex's empty list, or
 * Tessera's schema (an interrupted `init` leaves it without a vault).
 * @throws ForeignDatabaseError
 */
export function requireOwnDatabase(contents: TeamDatabaseContents): void {
  if (contents.foreignTables.length > 0) throw new ForeignDatabaseError(contents.foreignTables)
}

function connectPostgres(url: string, poolSize: number): Knex {
  return knex({ client: 'pg', connection: postgresConnection(url), log: SILENT_LOG, pool: { min: 1, max: poolSize }, migrations: MIGRATIONS })
}

async function openPostgres(url: string, readers: number, olderInstancesWaitMs: number): Promise<Database> {
  const writer = connectPostgres(url, 1)
  return assemble(writer, { prepare: () => migrateAlone(url, writer, olderInstancesWaitMs), openReader: () => connectPostgres(url, readers) })
}

/**
 * Instances starting together would run the migrations together, and knex
 * refuses the second run outright: each waits for an advisory lock instead.
 */
async function migrateAlone(url: string, writer: Knex, olderInstancesWaitMs: number): Promise<void> {
  const lock = connectPostgres(url, 1)
  try {
    await lock.transaction(async (trx) => {
      await lockUntilCommit(trx, MIGRATION_LOCK)
      await migrateToLatest(writer, () => awaitOlderInstances(writer, olderInstancesWaitMs))
    })
  } finally {
    await lock.destroy()
  }
}
