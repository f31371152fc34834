/**
 * The audit trail of a team vault, kept and checked while its instances serve:
 * `tessera logs archive` moves old entries out while two instances keep
 * writing (every write answered, the file and the rest of the chain verify),
 * and edits made directly in PostgreSQL are caught by `tessera logs verify`
 * and named, as on a vault file.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import knex, { type Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, type Served } from '../helpers/cli'
import { onPostgres } from '../helpers/postgres'
import { startTeamVault } from '../helpers/team'

/** The AUDIT_BROKEN exit code. */
const BROKEN = 12

// Always on PostgreSQL, whichever engine the API suite runs on: run once, in the node project.
describe.skipIf(onPostgres)('the audit trail of a team vault', { timeout: 120_000 }, () => {
  const cleanup: (() => Promise<unknown>)[] = []
  let databaseUrl: string
  let dirs: string[]
  let instances: Served[]
  let key: string
  let managementKey: string
  let db: Knex

  async function createToken(instance: number, n: number): Promise<number> {
    const response = await fetch(instances[instance].url + '/tokens', {
      method: 'POST',
      headers: { 'svc-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'token', data: `archived value ${n}` })
    })
    return response.status
  }

  const verifyVault = () => run(['logs', 'verify', '--data-dir', dirs[0], '--database-url', databaseUrl])

  beforeAll(async () => {
    const team = await startTeamVault()
    cleanup.push(() => team.close())
    ;({ databaseUrl, dirs, instances, managementKey } = team)
    const application = await fetch(instances[0].url + '/applications', {
      method: 'POST',
      headers: { 'svc-api-key': managementKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'archive load', type: 'private', permissions: ['token:create'] })
    })
    key = ((await application.json()) as { key: string }).key
    db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } })
    cleanup.push(() => db.destroy())
  }, 90_000)
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step()
  })

  it('archives old entries while both instances keep writing; the file and the rest of the chain verify', async () => {
    expect(await Promise.all(Array.from({ length: 40 }, (_, i) => createToken(i % 2, i)))).toEqual(Array(40).fill(201))
    await sleep(20)
    const before = new Date().toISOString()
    await sleep(20)
    // Outside the data directory, which holds the vault's keys: an archive there is refused.
    const archiveDir = await mkdtemp(join(tmpdir(), 'tessera-team-archive-'))
    cleanup.push(() => rm(archiveDir, { recursive: true, force: true }))
    const file = join(archiveDir, 'archive.jsonl')
    let writing = true
    const writes: Promise<number>[] = []
    const writers = (async () => {
      for (let n = 100; writing; n++) {
        writes.push(createToken(n % 2, n))
        await sleep(5)
      }
    })()
    const archived = await run(['logs', 'archive', '--data-dir', dirs[0], '--database-url', databaseUrl, '--before', before, '--out', file])
    writing = false
    await writers
    expect(archived.code, archived.stderr).toBe(0)
    expect(writes.length).toBeGreaterThan(0)
    expect(new Set(await Promise.all(writes))).toEqual(new Set([201]))

    const offline = await run(['logs', 'verify', '--file', file])
    expect(offline.code, offline.stdout + offline.stderr).toBe(0)
    const rest = await verifyVault()
    expect(rest.code, rest.stdout + rest.stderr).toBe(0)
    expect(rest.stdout).toMatch(/archived and pruned/)
    const oldest = await db('logs').min({ at: 'created_at' }).first()
    expect(Number(oldest!.at)).toBeGreaterThanOrEqual(Date.parse(before))
  })

  /** Applies `tamper`, runs `logs verify`, then puts the rows back as they were. */
  async function verifyTampered(seq: number, tamper: (db: Knex) => Promise<unknown>) {
    const original = await db('logs').where({ seq }).first()
    await tamper(db)
    try {
      return await verifyVault()
    } finally {
      await db('logs').where({ seq }).delete()
      await db('logs').insert(original)
    }
  }

  it.each([
    ['an edited message', (seq: number) => (db: Knex) => db('logs').update({ message: 'Token deleted' }).where({ seq }), 'its content was changed'],
    ['a changed created_at', (seq: number) => (db: Knex) => db.raw('UPDATE logs SET created_at = created_at - 3600000 WHERE seq = ?', [seq]), 'its content was changed'],
    ['an entry written without a MAC', (seq: number) => (db: Knex) => db('logs').update({ mac: null }).where({ seq }), 'it has no MAC']
  ])('catches %s made in the database while the instances run, naming the entry', async (_name, tamper, problem) => {
    const { seq } = (await db('logs').min({ seq: 'seq' }).first()) as { seq: string | number }
    const target = Number(seq) + 3
    const result = await verifyTampered(target, tamper(target))
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toContain(`Audit log BROKEN at seq ${target}: ${problem}`)
    expect((await verifyVault()).code).toBe(0)
  })

  it('catches a deleted entry at the one after it', async () => {
    const { seq } = (await db('logs').min({ seq: 'seq' }).first()) as { seq: string | number }
    const target = Number(seq) + 5
    const result = await verifyTampered(target, (db) => db('logs').where({ seq: target }).delete())
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toContain(`Audit log BROKEN at seq ${target + 1}: the entries before it (seq ${target}–${target}) are missing`)
  })
})
