/**
 * Upgrading a team vault while its instances serve: an instance of a newer
 * version (this one with one more migration, next-version/tessera.cjs) asks
 * the running instances to step aside, waits for them to go, migrates the
 * database and serves what they wrote. An instance of the older version then
 * refuses the migrated database; instances that do not step aside hold the
 * migration off until `--upgrade-wait` runs out, and nothing is migrated.
 * A vault file a newer version migrated is refused the same way.
 */
import { copyFile, mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import knex, { type Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATABASE_FILE } from '../../src/main/bootstrap/vault'
import { UPGRADE_CHANNEL } from '../../src/main/storage/change-feed'
import { MIGRATION_LOCK, schemaApplicationName } from '../../src/main/storage/dialect'
import { SCHEMA_LEVEL } from '../../src/main/storage/migrations'
import { listening, run, start, terminate, track, type Finished, type Running, type Served } from '../helpers/cli'
import { createTestDatabase, onPostgres, withDatabase } from '../helpers/postgres'
import { startTeamVault, type TeamVault } from '../helpers/team'
import { NEXT_LEVEL, NEXT_MIGRATION, NEXT_TABLE } from './next-version/migration'

const NEXT_VERSION_CLI = join(__dirname, 'next-version', 'tessera.cjs')
/** Tests that start several `tessera` processes: seconds each on a busy machine. */
const UPGRADE_TEST_MS = 120_000

/** Starts the next version's `tessera args…` on the team database. */
function startNextVersion(args: string[], databaseUrl: string): Running {
  return track(process.execPath, [NEXT_VERSION_CLI, ...args], { TESSERA_DATABASE_URL: databaseUrl, TESSERA_LOG_LEVEL: 'warn' }, {}, UPGRADE_TEST_MS)
}

/** A data directory for one more instance: the vault's master key copied from the first. */
async function instanceDir(team: { dirs: string[] }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-upgrade-'))
  await copyFile(join(team.dirs[0], 'master.key'), join(dir, 'master.key'))
  return dir
}

async function migrated(databaseUrl: string): Promise<boolean> {
  const db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } })
  try {
    return (await db('knex_migrations').where({ name: NEXT_MIGRATION }).first()) !== undefined && (await db.schema.hasTable(NEXT_TABLE))
  } finally {
    await db.destroy()
  }
}

/** Whether a connection of schema `level` holds, or awaits, the turn at the migrations (an advisory lock). */
async function migrationTurn(databaseUrl: string, level: string, state: 'held' | 'awaited'): Promise<boolean> {
  const db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } })
  try {
    const { rows } = await db.raw(
      `SELECT count(*) AS count FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
        WHERE a.datname = current_database() AND a.application_name = ? AND l.locktype = 'advisory' AND l.objid = ? AND l.granted = ?`,
      [schemaApplicationName(level), MIGRATION_LOCK, state === 'held']
    )
    return Number(rows[0].count) > 0
  } finally {
    await db.destroy()
  }
}

/** Polls `check` until it holds (the test's own timeout bounds it). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(100)
}

async function call(server: Served, key: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const request = body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) }
  const response = await fetch(server.url + path, { ...request, headers: { 'svc-api-key': key, 'content-type': 'application/json' } })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

/** POST `body` to `path`. */
const post = (server: Served, key: string, path: string, body: unknown) => call(server, key, path, body)
/** GET `path`. */
const get = (server: Served, key: string, path: string) => call(server, key, path)

// Always on PostgreSQL, whichever engine the API suite runs on: run once, in the node project.
describe.skipIf(onPostgres)('upgrading a team vault while its instances serve', () => {
  const dirs: string[] = []
  let team: TeamVault
  let newer: Served | undefined
  /** A private application's key that creates tokens and reads their plaintext. */
  let key: string

  beforeAll(async () => {
    team = await startTeamVault()
    const application = await post(team.instances[0], team.managementKey, '/applications', {
      name: 'app',
      type: 'private',
      rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: ['token:create', 'token:read'] }]
    })
    key = application.body.key as string
  }, UPGRADE_TEST_MS)

  /** Both instances still run, and take writes. */
  async function expectStillServing(): Promise<void> {
    for (const instance of team.instances) {
      expect(instance.child.exitCode).toBeNull()
      expect((await post(instance, key, '/tokens', { type: 'token', data: 'still served' })).status).toBe(201)
    }
  }

  afterAll(async () => {
    if (newer) await terminate(newer)
    await team.close()
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
  })

  it(
    'a newer version\'s command other than serve refuses to migrate under the running instances, which go on serving',
    async () => {
      const keys = await startNextVersion(['keys', 'status', '--data-dir', team.dirs[0]], team.databaseUrl).finished
      expect(keys.code, keys.stderr).toBe(5)
      expect(keys.stderr).toContain('Instances of an older Tessera version are still connected to the team database (')
      expect(await migrated(team.databaseUrl)).toBe(false)
      await expectStillServing()
    },
    UPGRADE_TEST_MS
  )

  it(
    'the running instances ignore a request to step aside that names no newer schema',
    async () => {
      const db = knex({ client: 'pg', connection: team.databaseUrl, pool: { min: 0, max: 1 } })
      try {
        for (const payload of [SCHEMA_LEVEL, '00000000000000', 'garbage', `${NEXT_LEVEL}0`, '']) await db.raw('SELECT pg_notify(?, ?)', [UPGRADE_CHANNEL, payload])
      } finally {
        await db.destroy()
      }
      await sleep(500)
      await expectStillServing()
    },
    UPGRADE_TEST_MS
  )

  it(
    'the running instances ignore a request to step aside from a connection that is not a newer instance of the vault',
    async () => {
      const otherRole = `tessera_reader_${process.pid}`
      await withDatabase(team.databaseUrl, (db) => db.raw(`CREATE ROLE ${otherRole} LOGIN`))
      try {
        const connection = (role: string | undefined, applicationName: string | undefined) => {
          const url = new URL(team.databaseUrl)
          if (role) url.username = role
          if (applicationName) url.searchParams.set('application_name', applicationName)
          return url.toString()
        }
        const askToStepAside = (url: string) => withDatabase(url, (db) => db.raw('SELECT pg_notify(?, ?)', [UPGRADE_CHANNEL, NEXT_LEVEL]))
        // Another role that may connect, named as a newer instance would be; the vault's own role, not named as one.
        await askToStepAside(connection(otherRole, schemaApplicationName(NEXT_LEVEL)))
        await askToStepAside(connection(undefined, undefined))
      } finally {
        await withDatabase(team.databaseUrl, (db) => db.raw(`DROP ROLE ${otherRole}`))
      }
      await sleep(1000)
      await expectStillServing()
    },
    UPGRADE_TEST_MS
  )

  it(
    'the running instances step aside for a newer one, which migrates the database and serves what they wrote',
    async () => {
      const [a, b] = team.instances
      const before = await post(a, key, '/tokens', { type: 'token', data: 'written before the upgrade', metadata: { when: 'before' } })
      expect(before.status).toBe(201)

      // Writers keep creating on both instances until each has gone.
      const acknowledged: string[] = []
      const writer = async (server: Served): Promise<void> => {
        for (let n = 0; server.child.exitCode === null && n < 5000; n++) {
          const created = await post(server, key, '/tokens', { type: 'token', data: `during ${n}`, metadata: { when: 'during' } }).catch(() => undefined)
          if (created?.status === 201) acknowledged.push(created.body.id as string)
        }
      }
      // And bulk tokenize, 500 values a request, on B.
      const acknowledgedInBulk: string[] = []
      const bulkWriter = async (server: Served): Promise<void> => {
        for (let n = 0; server.child.exitCode === null && n < 100; n++) {
          const values = Array.from({ length: 500 }, (_, i) => `bulk ${n} ${i}`)
          const created = await post(server, key, '/tokenize', values).catch(() => undefined)
          if (created?.status === 200) acknowledgedInBulk.push(...(created.body as unknown as string[]))
        }
      }
      const writing = Promise.all([...[a, b, a, b].map(writer), bulkWriter(b)])

      const dir = await instanceDir(team)
      dirs.push(dir)
      const starting = startNextVersion(['serve', '--data-dir', dir, '--port', '0'], team.databaseUrl)
      const ends: Finished[] = await Promise.all([a.finished, b.finished])
      await writing
      newer = await listening(starting)
      for (const end of ends) {
        expect(end.code, end.stderr).toBe(16)
        expect(end.stderr).toContain(`a newer version of Tessera (schema ${NEXT_LEVEL}) is upgrading the team database, so this instance stops serving`)
        // Said once, though the newer instance asked until it had gone.
        expect(end.stderr.split('is upgrading the team database').length).toBe(2)
      }
      expect(await migrated(team.databaseUrl)).toBe(true)

      const read = await get(newer, key, `/tokens/${before.body.id as string}`)
      expect(read.status).toBe(200)
      expect(read.body).toMatchObject({ data: 'written before the upgrade', metadata: { when: 'before' } })
      // No write the older instances acknowledged while stepping aside is lost, single or bulk.
      expect(acknowledged.length).toBeGreaterThan(0)
      expect(acknowledgedInBulk.length).toBeGreaterThan(0)
      const ids = [...acknowledged, ...acknowledgedInBulk]
      const upgraded = newer
      for (let start = 0; start < ids.length; start += 50) {
        const reads = await Promise.all(ids.slice(start, start + 50).map((id) => get(upgraded, key, `/tokens/${id}`)))
        expect(reads.filter((read) => read.status !== 200)).toEqual([])
      }
      const after = await post(newer, key, '/tokens', { type: 'token', data: 'written after the upgrade' })
      expect(after.status).toBe(201)
      // One audit chain, written by both versions, verifies.
      const verify = await startNextVersion(['logs', 'verify', '--data-dir', dir], team.databaseUrl).finished
      expect(verify.code, verify.stderr).toBe(0)
    },
    UPGRADE_TEST_MS
  )

  it(
    'an instance of the older version refuses the migrated database, naming the newer schema',
    async () => {
      const older = await run(['serve', '--data-dir', team.dirs[1], '--port', '0'], { TESSERA_DATABASE_URL: team.databaseUrl })
      expect(older.code).toBe(16)
      expect(older.stderr).toContain(`The database was migrated by a newer version of Tessera (schema ${NEXT_LEVEL}); this version writes schema ${SCHEMA_LEVEL}.`)
      expect(older.stderr).toContain('install that version of Tessera (or a later one) here')
    },
    UPGRADE_TEST_MS
  )
})

describe.skipIf(onPostgres)('an upgrade under older instances that do not step aside', () => {
  const cleanup: (() => Promise<unknown>)[] = []
  let databaseUrl: string
  let dir: string
  /** An older instance that does not step aside. */
  let olderInstance: Knex

  /** A team vault of this version in a fresh database, and a data directory for one more instance. */
  async function initialisedVault(): Promise<{ databaseUrl: string; dir: string }> {
    const database = await createTestDatabase()
    const initDir = await mkdtemp(join(tmpdir(), 'tessera-upgrade-'))
    cleanup.push(database.drop, () => rm(initDir, { recursive: true, force: true }))
    const init = await run(['init', '--data-dir', initDir, '--database-url', database.url])
    expect(init.code, init.stderr).toBe(0)
    const dir = await instanceDir({ dirs: [initDir] })
    cleanup.push(() => rm(dir, { recursive: true, force: true }))
    return { databaseUrl: database.url, dir }
  }

  /** A connection as an instance of this version names its own: to the next version, an older instance that hears no request to step aside. */
  async function olderConnection(databaseUrl: string): Promise<Knex> {
    const connection = knex({ client: 'pg', connection: { connectionString: databaseUrl, application_name: schemaApplicationName(SCHEMA_LEVEL) }, pool: { min: 1, max: 1 } })
    cleanup.push(() => connection.destroy())
    await connection.raw('select 1')
    return connection
  }

  beforeAll(async () => {
    ;({ databaseUrl, dir } = await initialisedVault())
    olderInstance = await olderConnection(databaseUrl)
  }, UPGRADE_TEST_MS)

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step()
  })

  it(
    'waits --upgrade-wait for them, then refuses and migrates nothing',
    async () => {
      const refused = await startNextVersion(['serve', '--data-dir', dir, '--port', '0', '--upgrade-wait', '1'], databaseUrl).finished
      expect(refused.code).toBe(5)
      expect(refused.stderr).toContain('Instances of an older Tessera version are still connected to the team database (1) after 1 s of asking them to step aside')
      expect(refused.stderr).toContain('hint: stop what still runs the older version')
      expect(await migrated(databaseUrl)).toBe(false)
    },
    UPGRADE_TEST_MS
  )

  it(
    'migrates and serves as soon as the last of them has gone',
    async () => {
      const starting = startNextVersion(['serve', '--data-dir', dir, '--port', '0', '--upgrade-wait', '60'], databaseUrl)
      cleanup.push(() => terminate(starting))
      await sleep(1000)
      expect(starting.child.exitCode).toBeNull()
      expect(await migrated(databaseUrl)).toBe(false)
      await olderInstance.destroy()
      await listening(starting)
      expect(await migrated(databaseUrl)).toBe(true)
    },
    UPGRADE_TEST_MS
  )
  it(
    'is not held off by an instance of the older version starting meanwhile, which then refuses the migrated database',
    async () => {
      const vault = await initialisedVault()
      const stillOlder = await olderConnection(vault.databaseUrl)
      const upgrading = startNextVersion(['serve', '--data-dir', vault.dir, '--port', '0', '--upgrade-wait', '20'], vault.databaseUrl)
      cleanup.push(() => terminate(upgrading))
      await until(() => migrationTurn(vault.databaseUrl, NEXT_LEVEL, 'held'))
      // An instance of this (older) version starts meanwhile: it waits for its turn at the migrations.
      const older = start(['serve', '--data-dir', vault.dir, '--port', '0'], { TESSERA_DATABASE_URL: vault.databaseUrl })
      await until(() => migrationTurn(vault.databaseUrl, SCHEMA_LEVEL, 'awaited'))
      await stillOlder.destroy()

      await listening(upgrading)
      expect(await migrated(vault.databaseUrl)).toBe(true)
      const refused = await older.finished
      expect(refused.code).toBe(16)
      expect(refused.stderr).toContain(`The database was migrated by a newer version of Tessera (schema ${NEXT_LEVEL})`)
    },
    UPGRADE_TEST_MS
  )
})

describe.skipIf(onPostgres)('a vault file a newer version migrated', () => {
  it(
    'is refused by this version, which names both schemas and changes nothing',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'tessera-upgrade-'))
      try {
        expect((await run(['init', '--data-dir', dir])).code).toBe(0)
        // Any command of the next version that opens the vault migrates its file.
        const newer = await track(process.execPath, [NEXT_VERSION_CLI, 'keys', 'status', '--data-dir', dir]).finished
        expect(newer.code, newer.stderr).toBe(0)
        const before = await stat(join(dir, DATABASE_FILE))

        const older = await run(['serve', '--data-dir', dir, '--port', '0'])
        expect(older.code).toBe(16)
        expect(older.stderr).toContain(`The database was migrated by a newer version of Tessera (schema ${NEXT_LEVEL}); this version writes schema ${SCHEMA_LEVEL}.`)
        expect((await stat(join(dir, DATABASE_FILE))).mtimeMs).toBe(before.mtimeMs)
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
    UPGRADE_TEST_MS
  )
})
