/**
 * Two `tessera serve` processes on one PostgreSQL database behave as one:
 * what one instance changes (an API key revoked, regenerated or expired, a
 * token deleted or updated, a data-key rotation) holds on the other at once,
 * through the change notifications, and within the caches' short expiry even
 * when no notification is sent. Each check polls the other instance a few
 * times within a bound of about two seconds.
 */
import { copyFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import knex, { type Knex } from 'knex'
import { Client } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, terminate, type Served } from '../helpers/cli'
import { onPostgres } from '../helpers/postgres'
import { startTeamVault, type TeamVault } from '../helpers/team'

const CARD = { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 } }

/** How long another instance may keep serving a stale entry: a notification's delivery, or the caches' 1 s expiry. */
const BOUND_MS = 2000
const POLL_MS = 100
/** Tests that run `tessera` commands: each starts a process, seconds on a busy machine. */
const CLI_TEST_MS = 90_000

interface Reply {
  status: number
  body: Record<string, any>
}

async function api(server: Served, key: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const type = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'
  const response = await fetch(server.url + path, { method, headers: { 'svc-api-key': key, 'content-type': type }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} }
}

/** Asks `request` until `accept` holds, a few times within BOUND_MS; returns the last reply. */
async function pollUntil(request: () => Promise<Reply>, accept: (reply: Reply) => boolean): Promise<Reply> {
  const deadline = Date.now() + BOUND_MS
  let reply = await request()
  while (!accept(reply) && Date.now() < deadline) {
    await sleep(POLL_MS)
    reply = await request()
  }
  return reply
}

// Always on PostgreSQL, whichever engine the API suite runs on: run once, in the node project.
describe.skipIf(onPostgres)('two instances of a team vault on one database', () => {
  const cleanup: (() => Promise<unknown>)[] = []
  let team: TeamVault
  let databaseUrl: string
  let dirA: string
  let dirB: string
  let a: Served
  let b: Served
  let managementKey: string
  let db: Knex
  const notifications: string[] = []

  beforeAll(async () => {
    team = await startTeamVault()
    cleanup.push(() => team.close())
    ;({ databaseUrl, managementKey } = team)
    ;[dirA, dirB] = team.dirs
    ;[a, b] = team.instances
    db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } })
    cleanup.push(() => db.destroy())
    // What every other instance hears: kinds and ids only.
    const listener = new Client({ connectionString: databaseUrl })
    await listener.connect()
    listener.on('notification', (message) => notifications.push(message.payload ?? ''))
    await listener.query('LISTEN tessera_changes')
    cleanup.push(() => listener.end())
  }, 60_000)

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step()
  })

  async function newApplication(body: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
    const created = await api(a, managementKey, 'POST', '/applications', { name: 'payments', type: 'private', permissions: ['token:create', 'token:read', 'token:update', 'token:delete'], ...body })
    expect(created.status).toBe(201)
    return { id: created.body.id, key: created.body.key }
  }

  /** The key works on B, twice: the second answer comes from B's cache. */
  async function warmOnB(key: string): Promise<void> {
    for (let i = 0; i < 2; i++) expect((await api(b, key, 'GET', '/tokens')).status).toBe(200)
  }

  const refused = (reply: Reply) => reply.status === 401

  it('refuses on B a key deleted on A, and the notification names only kinds and ids', async () => {
    const app = await newApplication()
    await warmOnB(app.key)
    expect((await api(a, managementKey, 'DELETE', `/applications/${app.id}`)).status).toBe(204)
    expect((await pollUntil(() => api(b, app.key, 'GET', '/tokens'), refused)).status).toBe(401)
    const sent = notifications.map((payload) => JSON.parse(payload) as Record<string, unknown>)
    expect(sent).toContainEqual({ kind: 'application', ids: [app.id] })
    for (const payload of sent) expect(Object.keys(payload).every((field) => ['kind', 'tenantId', 'ids'].includes(field))).toBe(true)
    expect(notifications.join()).not.toContain(app.key.slice(-16))
  })

  it('refuses on B a session key revoked on A', async () => {
    const publicApp = await newApplication({ type: 'public', permissions: ['token:create'] })
    const privateApp = await newApplication()
    const session = await api(a, publicApp.key, 'POST', '/sessions')
    expect(session.status).toBe(201)
    expect((await api(a, privateApp.key, 'POST', '/sessions/authorize', { nonce: session.body.nonce, permissions: ['token:read'] })).status).toBe(204)
    await warmOnB(session.body.session_key)
    const listed = await api(a, managementKey, 'GET', '/sessions')
    const [sessionId] = (listed.body.data as { id: string }[]).map((row) => row.id)
    expect((await api(a, managementKey, 'DELETE', `/sessions/${sessionId}`)).status).toBe(204)
    expect((await pollUntil(() => api(b, session.body.session_key, 'GET', '/tokens'), refused)).status).toBe(401)
  })

  it('listens again after its connection to the database is cut, and keeps refusing what was revoked', async () => {
    const listeners = () => db('pg_stat_activity').where({ application_name: 'tessera-changes' }).count({ n: '*' })
    expect(Number((await listeners())[0].n)).toBeGreaterThanOrEqual(2)
    await db.raw("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'tessera-changes'")
    const app = await newApplication()
    const reconnected = await pollUntil(async () => ({ status: Number((await listeners())[0].n), body: {} }), (reply) => reply.status >= 2)
    expect(reconnected.status).toBeGreaterThanOrEqual(2)
    await warmOnB(app.key)
    expect((await api(a, managementKey, 'DELETE', `/applications/${app.id}`)).status).toBe(204)
    expect((await pollUntil(() => api(b, app.key, 'GET', '/tokens'), refused)).status).toBe(401)
  })

  it('refuses on B the old key of an application regenerated on A, and takes the new one', async () => {
    const app = await newApplication()
    await warmOnB(app.key)
    const regenerated = await api(a, managementKey, 'POST', `/applications/${app.id}/regenerate`)
    expect(regenerated.status).toBe(200)
    expect((await pollUntil(() => api(b, app.key, 'GET', '/tokens'), refused)).status).toBe(401)
    expect((await api(b, regenerated.body.key, 'GET', '/tokens')).status).toBe(200)
  })

  it('refuses on B one key of an application deleted on A, and keeps taking its other key', async () => {
    const app = await newApplication()
    const added = await api(a, managementKey, 'POST', `/applications/${app.id}/keys`)
    expect(added.status).toBe(201)
    await warmOnB(app.key)
    await warmOnB(added.body.key)
    const [first] = (await api(a, managementKey, 'GET', `/applications/${app.id}/keys`)).body as unknown as { id: string }[]
    expect((await api(a, managementKey, 'DELETE', `/applications/${app.id}/keys/${first.id}`)).status).toBe(204)
    expect((await pollUntil(() => api(b, app.key, 'GET', '/tokens'), refused)).status).toBe(401)
    expect((await api(b, added.body.key, 'GET', '/tokens')).status).toBe(200)
  })

  it('applies on B the permissions an application was given on A', async () => {
    const app = await newApplication()
    await warmOnB(app.key)
    const narrowed = await api(a, managementKey, 'PUT', `/applications/${app.id}`, { name: 'payments', permissions: ['token:create'] })
    expect(narrowed.status).toBe(200)
    expect((await pollUntil(() => api(b, app.key, 'GET', '/tokens'), (reply) => reply.status === 403)).status).toBe(403)
  })

  it('refuses on B a key whose expiry passed, as on A', async () => {
    const expiresAt = new Date(Date.now() + 1500)
    const app = await newApplication({ expires_at: expiresAt.toISOString() })
    await warmOnB(app.key)
    await sleep(Math.max(0, expiresAt.getTime() - Date.now()))
    expect((await pollUntil(() => api(b, app.key, 'GET', '/tokens'), refused)).status).toBe(401)
    expect((await api(a, app.key, 'GET', '/tokens')).status).toBe(401)
  })

  it('refuses on B a key revoked behind its back, with no notification, once its cache entry expires', async () => {
    const app = await newApplication()
    await warmOnB(app.key)
    // A change no instance announced (as if its notification were lost): the caches' expiry is the backstop.
    expect(await db('applications').where({ id: app.id }).delete()).toBe(1)
    expect((await pollUntil(() => api(b, app.key, 'GET', '/tokens'), refused)).status).toBe(401)
  })

  it('answers 404 on B for a token deleted on A, and shows on B an update made on A', async () => {
    const app = await newApplication()
    const created = await api(a, app.key, 'POST', '/tokens', { ...CARD, metadata: { stage: 'one' } })
    expect(created.status).toBe(201)
    const path = `/tokens/${created.body.id}`
    for (let i = 0; i < 2; i++) expect((await api(b, app.key, 'GET', path)).body.metadata).toEqual({ stage: 'one' })

    expect((await api(a, app.key, 'PATCH', path, { metadata: { stage: 'two' } })).status).toBe(200)
    const updated = await pollUntil(() => api(b, app.key, 'GET', path), (reply) => reply.body.metadata?.stage === 'two')
    expect(updated.body.metadata).toEqual({ stage: 'two' })

    expect((await api(a, app.key, 'DELETE', path)).status).toBe(204)
    expect((await pollUntil(() => api(b, app.key, 'GET', path), (reply) => reply.status === 404)).status).toBe(404)
  })

  it('seals new tokens on B under the data key version a rotation made while both served', async () => {
    const app = await newApplication()
    const before = await api(b, app.key, 'POST', '/tokens', CARD)
    expect(before.status).toBe(201)
    const keyVersionOf = async (id: string) => Number((await db('tokens').where({ id }).first('key_version')).key_version)
    expect(await keyVersionOf(before.body.id)).toBe(1)

    // On a team vault the key commands do not wait for the servers to stop: the database arbitrates.
    const rotate = await run(['keys', 'rotate', '--data-dir', dirA, '--database-url', databaseUrl])
    expect(rotate.code).toBe(0)
    const status = JSON.parse((await run(['keys', 'status', '--data-dir', dirA, '--database-url', databaseUrl, '--json'])).stdout) as { tenants: { current_version: number }[] }
    expect(status.tenants[0].current_version).toBe(2)

    const createOnB = async (): Promise<Reply> => {
      const reply = await api(b, app.key, 'POST', '/tokens', CARD)
      return { ...reply, body: { ...reply.body, key_version: await keyVersionOf(reply.body.id) } }
    }
    expect((await pollUntil(createOnB, (reply) => reply.body.key_version === 2)).body.key_version).toBe(2)
    // The token made before the rotation, re-encrypted by the command, still opens on both.
    for (const server of [a, b]) expect((await api(server, app.key, 'GET', `/tokens/${before.body.id}`)).status).toBe(200)

    // Retiring version 1 while both serve: neither keeps it, and both still read and write.
    const retire = await run(['keys', 'retire', '--version', '1', '--data-dir', dirA, '--database-url', databaseUrl, '--json'])
    expect(retire.code).toBe(0)
    for (const server of [a, b]) {
      expect((await api(server, app.key, 'GET', `/tokens/${before.body.id}`)).status).toBe(200)
      const created = await api(server, app.key, 'POST', '/tokens', CARD)
      expect(created.status).toBe(201)
      expect(await keyVersionOf(created.body.id)).toBe(2)
    }
  }, CLI_TEST_MS)

  it('after a master-key rotation, an instance on the old key refuses to seal under a data key it cannot open, until restarted with the new one', async () => {
    const app = await newApplication()
    expect((await run(['keys', 'rotate-master', '--data-dir', dirA, '--database-url', databaseUrl])).code).toBe(0)
    // The keys B unwrapped before the rotation are the same keys: it goes on serving.
    expect((await api(b, app.key, 'POST', '/tokens', CARD)).status).toBe(201)

    // A data key wrapped under the new master key: B cannot open it, and refuses to seal under an older one.
    expect((await run(['keys', 'rotate', '--data-dir', dirA, '--database-url', databaseUrl])).code).toBe(0)
    const refusedOnB = await pollUntil(() => api(b, app.key, 'POST', '/tokens', CARD), (reply) => reply.status === 503)
    expect(refusedOnB.status).toBe(503)
    expect(JSON.stringify(refusedOnB.body)).toContain('master key is out of date')

    await terminate(b)
    await copyFile(join(dirA, 'master.key'), join(dirB, 'master.key'))
    b = await team.serveAgain(dirB)
    const created = await api(b, app.key, 'POST', '/tokens', CARD)
    expect(created.status).toBe(201)
    expect(Number((await db('tokens').where({ id: created.body.id }).first('key_version')).key_version)).toBe(3)
  }, CLI_TEST_MS)

  it('retires a version only once every instance has had time to move off it: three seconds after the rotation, however soon it is asked', async () => {
    const keys = (...args: string[]) => run(['keys', ...args, '--data-dir', dirA, '--database-url', databaseUrl])
    const before = (JSON.parse((await keys('status', '--json')).stdout) as { tenants: { current_version: number }[] }).tenants[0].current_version
    expect((await keys('rotate')).code).toBe(0)
    const retired = await keys('retire', '--version', String(before), '--json')
    expect(retired.code, retired.stderr).toBe(0)
    const report = JSON.parse(retired.stdout) as { retired_at: string; rotation: { started_at: string } }
    expect(Date.parse(report.retired_at) - Date.parse(report.rotation.started_at)).toBeGreaterThanOrEqual(3000)
  }, CLI_TEST_MS)

  it('keeps one audit chain that verifies, though both instances and the key commands wrote it', async () => {
    const verify = await run(['logs', 'verify', '--data-dir', dirA, '--database-url', databaseUrl])
    expect(verify.code).toBe(0)
  })
})
