/**
 * PostgreSQL for the tests: the API suite runs against it when
 * TESSERA_TEST_ENGINE=postgres (`npm run test:postgres`), each test service on
 * a database of its own, created empty and dropped when the service stops.
 * The server is TESSERA_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432/test).
 */
import knex from 'knex'

const ADMIN_URL = process.env.TESSERA_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test'

export const testEngine: 'sqlite' | 'postgres' = process.env.TESSERA_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'

/**
 * For the suites that copy, edit or scan the vault's SQLite file itself (tampering, archives
 * of a stopped vault, legacy upgrades, WAL contents): they run on SQLite only.
 */
export const onPostgres = testEngine === 'postgres'

let created = 0

function urlOf(database: string): string {
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  return url.toString()
}

/** Runs `work` on one connection to the database of `url`, closed afterwards. */
export async function withDatabase<T>(url: string, work: (db: knex.Knex) => Promise<T>): Promise<T> {
  const db = knex({ client: 'pg', connection: url, pool: { min: 0, max: 1 } })
  try {
    return await work(db)
  } finally {
    await db.destroy()
  }
}

const admin = <T>(work: (db: knex.Knex) => Promise<T>) => withDatabase(ADMIN_URL, work)

const dropDatabase = (name: string) => admin((db) => db.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)

/** A new, empty database; returns its URL and how to drop it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `tessera_test_${process.pid}_${++created}_${Date.now().toString(36)}`
  await admin((db) => db.raw(`CREATE DATABASE ${name}`)).catch((error: Error) => {
    throw new Error(`The PostgreSQL tests need a server at ${new URL(ADMIN_URL).host} (${error.message}): start it, or point TESSERA_TEST_POSTGRES at one.`)
  })
  return {
    url: urlOf(name),
    drop: () => dropDatabase(name)
  }
}

/** A copy of the database at `url`, as restoring a backup of it would make (nothing may be connected to it meanwhile); returns its URL and how to drop it. */
export async function copyTestDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const source = new URL(url).pathname.slice(1)
  const name = `${source}_copy`
  await admin((db) => db.raw(`CREATE DATABASE ${name} TEMPLATE ${source}`))
  return { url: urlOf(name), drop: () => dropDatabase(name) }
}
