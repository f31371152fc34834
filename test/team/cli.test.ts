/**
 * A team vault through the CLI: `init`, `serve` and the other vault commands
 * on a PostgreSQL database named by --database-url (or TESSERA_DATABASE_URL),
 * the master key kept in the data directory (or TESSERA_MASTER_KEY), never in
 * the database.
 */
import { existsSync } from 'node:fs'
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SCHEMA_LEVEL, migrationSource } from '../../src/main/storage/migrations'
import { run, serve, terminate } from '../helpers/cli'
import { createTestDatabase, withDatabase } from '../helpers/postgres'

describe('a team vault on PostgreSQL, through the CLI', { timeout: 90_000 }, () => {
  const cleanup: (() => Promise<unknown>)[] = []
  let databaseUrl: string
  let withPassword: string

  beforeAll(async () => {
    const database = await createTestDatabase()
    cleanup.push(database.drop)
    databaseUrl = database.url
    const url = new URL(databaseUrl)
    url.password = 'pw-secret-4242'
    withPassword = url.toString()
  })
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step()
  })

  async function dataDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-team-'))
    cleanup.push(() => rm(dir, { recursive: true, force: true }))
    return dir
  }

  it('inits once: of two inits racing on one database, one creates the vault and the other refuses, changing nothing', async () => {
    const [first, second] = await Promise.all([dataDir(), dataDir()])
    const results = await Promise.all([first, second].map((dir) => run(['init', '--data-dir', dir, '--database-url', databaseUrl, '--json'])))
    expect(results.map((result) => result.code).sort()).toEqual([0, 4])
    const created = results.find((result) => result.code === 0)!
    expect(JSON.parse(created.stdout)).toMatchObject({ team_vault: true, application: { type: 'management' } })
    const refused = results.find((result) => result.code !== 0)!
    expect(refused.stderr).toContain('A vault already exists in that database')

    const db = knex({ client: 'pg', connection: databaseUrl })
    try {
      expect(await db('tenants').count({ n: '*' })).toEqual([{ n: '1' }])
      // The master key is in the data directory, never in the database: no column holds it in the clear.
      const createdIn = (JSON.parse(created.stdout) as { data_dir: string }).data_dir
      const masterKey = await readFile(join(createdIn, 'master.key'), 'utf8')
      const dump = JSON.stringify(await Promise.all(['vault', 'tenant_keys', 'sealed_settings'].map((table) => db(table).select())))
      expect(dump).not.toContain(masterKey.trim())
      expect(dump).not.toContain(Buffer.from(masterKey.trim(), 'base64').toString('hex'))
    } finally {
      await db.destroy()
    }
  })

  it('serves the team vault from another machine-like data directory holding only the master key', async () => {
    const dir = await dataDir()
    const database = await freshDatabase()
    const init = JSON.parse((await run(['init', '--data-dir', dir, '--database-url', database.url, '--json'])).stdout) as { application: { key: string } }
    // Another data directory, as on a second machine: only the master key is copied there.
    const instanceDir = await dataDir()
    await copyFile(join(dir, 'master.key'), join(instanceDir, 'master.key'))
    const server = await serve(instanceDir, { TESSERA_DATABASE_URL: database.url })
    const api = async (key: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(server.url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
      return { status: response.status, body: (await response.json()) as Record<string, any> }
    }
    try {
      const app = await api(init.application.key, 'POST', '/applications', { name: 'payments', type: 'private', permissions: ['token:create', 'token:read'] })
      expect(app.status).toBe(201)
      const created = await api(app.body.key, 'POST', '/tokens', { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 } })
      expect(created.status).toBe(201)
      const read = await api(app.body.key, 'GET', `/tokens/${created.body.id}`)
      expect(read.status).toBe(200)
      expect(read.body.id).toBe(created.body.id)
    } finally {
      await terminate(server)
    }
    const verify = await run(['logs', 'verify', '--data-dir', instanceDir, '--database-url', database.url])
    expect(verify.code).toBe(0)
  })

  it('never prints the password of a database URL, in errors or output', async () => {
    const dir = await dataDir()
    const bad = await run(['serve', '--data-dir', dir, '--database-url', withPassword.replace('postgres:', 'mysql:')])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--database-url must be a PostgreSQL URL')
    const badEnv = await run(['serve', '--data-dir', dir], { TESSERA_DATABASE_URL: 'nope://pw-secret-4242@x' })
    expect(badEnv.code).toBe(2)
    const unreachable = await run(['init', '--data-dir', dir, '--database-url', 'postgres://tessera:pw-secret-4242@127.0.0.1:1/nowhere'])
    expect(unreachable.code).not.toBe(0)
    for (const result of [bad, badEnv, unreachable]) expect(result.stdout + result.stderr).not.toContain('pw-secret-4242')
  })

  /** The tables of a database's public schema, sorted. */
  function tablesOf(url: string): Promise<string[]> {
    return withDatabase(url, (db) => db('pg_tables').where('schemaname', 'public').orderBy('tablename').pluck('tablename'))
  }

  /** A new database holding one table of another application, with a row in it. */
  async function someoneElsesDatabase(): Promise<string> {
    const database = await freshDatabase()
    await withDatabase(database.url, async (db) => {
      await db.raw('CREATE TABLE customers (id integer PRIMARY KEY, name text)')
      await db('customers').insert({ id: 1, name: 'Ada' })
    })
    return database.url
  }

  it('says there is no vault in a database nobody initialised, and writes nothing to it', async () => {
    const dir = await dataDir()
    for (const url of [(await freshDatabase()).url, await someoneElsesDatabase()]) {
      const before = await tablesOf(url)
      for (const command of [['serve', '--port', '0'], ['keys', 'status'], ['logs', 'verify'], ['outbox']]) {
        const result = await run([...command, '--data-dir', dir, '--database-url', url])
        expect(result.code, result.stderr).toBe(3)
        expect(result.stderr).toContain('No vault in that database')
      }
      // A mistyped URL must not fill another application's database with Tessera's tables.
      expect(await tablesOf(url)).toEqual(before)
    }
  })

  it("will not create a vault among another application's tables, and leaves them as they were", async () => {
    const url = await someoneElsesDatabase()
    // A data directory init would create, two levels deep: it leaves neither level behind.
    const parent = join(await dataDir(), 'tessera')
    const result = await run(['init', '--data-dir', join(parent, 'vault'), '--database-url', url])
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain("tessera init: The database holds tables that are not Tessera's (customers); a team vault needs a database of its own.\nhint: create a database for Tessera")
    expect(await tablesOf(url)).toEqual(['customers'])
    expect(existsSync(parent)).toBe(false)
  })

  it("creates the vault in a database holding Tessera's schema without one (an interrupted init)", async () => {
    const database = await freshDatabase()
    const db = knex({ client: 'pg', connection: database.url, pool: { min: 0, max: 1 }, migrations: { migrationSource } })
    await db.migrate.latest().finally(() => db.destroy())
    const result = await run(['init', '--data-dir', await dataDir(), '--database-url', database.url])
    expect(result.code, result.stderr).toBe(0)
  })

  it('will not migrate a database that instances of an older version still use, and migrates it once they are gone', async () => {
    const dir = await dataDir()
    const database = await freshDatabase()
    // The database as the previous version left it: every migration but the newest.
    const previous = knex({ client: 'pg', connection: database.url, migrations: { migrationSource } })
    await previous.migrate.up()
    while ((await previous.migrate.list())[1].length > 1) await previous.migrate.up()
    await previous.destroy()
    const older = `tessera schema ${String(Number(SCHEMA_LEVEL) - 1)}`
    // An instance of that version, still connected (as it names itself), and one of this version, starting too.
    const olderInstance = knex({ client: 'pg', connection: { connectionString: database.url, application_name: older }, pool: { min: 1, max: 1 } })
    const sameVersion = knex({ client: 'pg', connection: { connectionString: database.url, application_name: `tessera schema ${SCHEMA_LEVEL}` }, pool: { min: 1, max: 1 } })
    await Promise.all([olderInstance.raw('select 1'), sameVersion.raw('select 1')])
    const newest = () => knex({ client: 'pg', connection: database.url, pool: { min: 0, max: 1 } })

    const refused = await run(['init', '--data-dir', dir, '--database-url', database.url])
    expect(refused.code).toBe(5)
    expect(refused.stderr).toContain('Instances of an older Tessera version are still connected to the team database (1); this version would migrate it under them.')
    expect(refused.stderr).toContain('hint: stop what still runs the older version')
    const check = newest()
    expect((await check.migrate.list({ migrationSource } as never))[1]).toHaveLength(1)
    await check.destroy()

    await olderInstance.destroy()
    const init = await run(['init', '--data-dir', dir, '--database-url', database.url])
    await sameVersion.destroy()
    expect(init.code, init.stderr).toBe(0)
  })

  async function freshDatabase(): Promise<{ url: string }> {
    const database = await createTestDatabase()
    cleanup.push(database.drop)
    return database
  }
})
