/** A database with the whole schema in a temporary folder, for the storage tests. */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { DATABASE_FILE } from '../../src/main/bootstrap/vault'
import { openDatabase, type Database } from '../../src/main/storage/database'
import { sql } from '../../src/main/storage/connections'
import { postgresConnection } from '../../src/main/storage/dialect'
import { createTestDatabase } from './postgres'

export interface TemporaryDatabase {
  db: Database
  /** Closes the database and removes its folder. */
  dispose(): Promise<void>
}

export async function openTemporaryDatabase(prefix: string): Promise<TemporaryDatabase> {
  const dir = await mkdtemp(join(tmpdir(), `tessera-${prefix}-`))
  const db = await openDatabase(join(dir, 'tessera.db'))
  return {
    db,
    async dispose() {
      await db.close()
      await rm(dir, { recursive: true, force: true })
    }
  }
}

/**
 * Opens a temporary database before the file's tests (before each test with
 * `each`) and disposes of it after them; `db` is the one currently open.
 */
export function useTemporaryDatabase(prefix: string, { each = false } = {}): { readonly db: Database } {
  let temporary: TemporaryDatabase | undefined
  ;(each ? beforeEach : beforeAll)(async () => {
    temporary = await openTemporaryDatabase(prefix)
  })
  ;(each ? afterEach : afterAll)(() => temporary!.dispose())
  return {
    get db() {
      return temporary!.db
    }
  }
}

/**
 * A fresh PostgreSQL database with the whole schema for the file's tests, opened
 * `instances` times (each as one instance of the service opens it: `db` is the
 * first), then closed and dropped after them.
 */
export function usePostgresDatabase({ instances = 1 } = {}): { readonly url: string; readonly db: Database; readonly instances: readonly Database[] } {
  let created: { url: string; drop(): Promise<void> } | undefined
  const opened: Database[] = []
  beforeAll(async () => {
    created = await createTestDatabase()
    for (let i = 0; i < instances; i++) opened.push(await openDatabase(created.url, { readers: 1 }))
  })
  afterAll(async () => {
    for (const database of opened) await database.close()
    await created?.drop()
  })
  return {
    get url() {
      return created!.url
    },
    get db() {
      return opened[0]
    },
    instances: opened
  }
}

/** The PostgreSQL database of each test service's data directory that has one (TESSERA_TEST_ENGINE=postgres). */
export const teamDatabases = new Map<string, string>()

/** A vault's database opened directly, for tests that read or tamper with what is stored: its file, or its PostgreSQL database. */
export function openVaultFile(dataDir: string): Knex {
  const url = teamDatabases.get(dataDir)
  if (url) return knex({ client: 'pg', connection: postgresConnection(url), pool: { min: 0, max: 1 } })
  return knex({ client: 'sqlite3', connection: { filename: join(dataDir, DATABASE_FILE) }, useNullAsDefault: true })
}

/** Runs `work` on a vault's database file opened directly, and closes it. */
export async function withVaultFile<T>(dataDir: string, work: (db: Knex) => Promise<T>): Promise<T> {
  const db = openVaultFile(dataDir)
  try {
    return await work(db)
  } finally {
    await db.destroy()
  }
}

/**
 * Every byte a vault stores, to search for what must never be there: its
 * SQLite file and WAL, or a dump of its PostgreSQL database's data.
 */
export async function storedBytes(dataDir: string): Promise<Buffer> {
  const url = teamDatabases.get(dataDir)
  if (url) return execFileSync('pg_dump', ['--data-only', '--dbname', url], { maxBuffer: 1 << 28 })
  const files = [DATABASE_FILE, `${DATABASE_FILE}-wal`]
  return Buffer.concat(await Promise.all(files.map((file) => readFile(join(dataDir, file)).catch(() => Buffer.alloc(0)))))
}

/** What is sent on `database`'s writer connection (its pool holds one) while `work` runs: each query's text. */
export async function sentOnWriter(database: Database, work: () => Promise<unknown>): Promise<string[]> {
  const writer = sql(database.writer)
  const connection = (await writer.client.acquireConnection()) as { query: (...args: unknown[]) => unknown }
  writer.client.releaseConnection(connection)
  const sent: string[] = []
  const query = connection.query
  connection.query = function (this: unknown, ...args: unknown[]) {
    const text = args[0]
    sent.push(typeof text === 'string' ? text : String((text as { text?: string }).text))
    return query.apply(this, args)
  }
  try {
    await work()
  } finally {
    connection.query = query
  }
  return sent
}

/** A statement as knex sent it: its SQL (PostgreSQL's with numbered placeholders) and its bindings. */
export type Statement = { sql: string; bindings: readonly Knex.RawBinding[] }

/** The statements `work` runs on `db` (knex's query event), in order: to ask the engine for their plans. */
export async function statementsRun(db: Knex, work: () => Promise<unknown>): Promise<Statement[]> {
  const statements: Statement[] = []
  const listener = (query: { sql: string; bindings?: Knex.RawBinding[] }) => statements.push({ sql: query.sql, bindings: query.bindings ?? [] })
  db.on('query', listener)
  try {
    await work()
  } finally {
    db.removeListener('query', listener)
  }
  return statements
}
