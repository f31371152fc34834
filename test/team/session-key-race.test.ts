/**
 * Two `tessera serve` processes on one PostgreSQL database: a session authorized on B
 * with a key that A is regenerating does not outlive the regenerate. The test holds
 * the audit chain's lock, which every write transaction of either instance takes
 * first, so that A's regenerate waits for it before B's authorize does, each after
 * its key was accepted; PostgreSQL then grants it in that order. The regenerate
 * commits first and B refuses the old key (401); had B gone first (another write of
 * A's ahead of the regenerate), the regenerate revokes what B authorized. Either way
 * no session survives.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import knex, { type Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AUDIT_CHAIN_LOCK } from '../../src/main/storage/dialect'
import type { Served } from '../helpers/cli'
import { onPostgres } from '../helpers/postgres'
import { startTeamVault, type TeamVault } from '../helpers/team'

interface Reply {
  status: number
  body: Record<string, any>
}

async function api(server: Served, key: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const response = await fetch(server.url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} }
}

const ROUNDS = 4

// Always on PostgreSQL, whichever engine the API suite runs on: run once, in the node project.
describe.skipIf(onPostgres)('a session authorized on one instance while another regenerates the key', { timeout: 90_000 }, () => {
  let team: TeamVault
  let a: Served
  let b: Served
  let managementKey: string
  let db: Knex

  beforeAll(async () => {
    team = await startTeamVault()
    ;({ managementKey } = team)
    ;[a, b] = team.instances
    db = knex({ client: 'pg', connection: team.databaseUrl, pool: { min: 0, max: 2 } })
  }, 60_000)
  afterAll(async () => {
    await db?.destroy()
    await team?.close()
  })

  /** The backends waiting for an advisory lock (the chain's turn: nothing else waits for one here). */
  async function waiting(): Promise<Set<number>> {
    const rows: { pid: number }[] = await db('pg_stat_activity').select('pid').where({ datname: db.raw('current_database()'), wait_event_type: 'Lock', wait_event: 'advisory' })
    return new Set(rows.map((row) => row.pid))
  }

  /** Sends `request`; resolves once a backend that was not waiting before waits for the chain's turn (or after 3 s), with the reply to come. */
  async function sendUntilItWaits(request: () => Promise<Reply>): Promise<{ reply: Promise<Reply> }> {
    const before = await waiting()
    const reply = request()
    const deadline = Date.now() + 3000
    while (Date.now() < deadline && [...(await waiting())].every((pid) => before.has(pid))) await sleep(20)
    return { reply }
  }

  it('refuses the old key on B, or revokes what it authorized: no session survives', async () => {
    const publicApp = await api(a, managementKey, 'POST', '/applications', { name: 'Checkout page', type: 'public', permissions: ['token:create'] })
    const owner = await api(a, managementKey, 'POST', '/applications', { name: 'Owner', type: 'private', permissions: ['token:create'] })
    const token = await api(a, owner.body.key, 'POST', '/tokens', { type: 'token', data: 'behind a session' })
    expect([publicApp.status, owner.status, token.status]).toEqual([201, 201, 201])
    const statuses: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const app = await api(a, managementKey, 'POST', '/applications', { name: `Backend ${round}`, type: 'private', permissions: ['token:read'] })
      const session = await api(b, publicApp.body.key, 'POST', '/sessions')
      expect([app.status, session.status]).toEqual([201, 201])
      // B has the key cached, as a busy instance would.
      expect((await api(b, app.body.key, 'GET', '/applications/key')).status).toBe(403)

      let release!: () => void
      let holding!: () => void
      const held = new Promise<void>((resolve) => (holding = resolve))
      const holder = db.transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(?)', [AUDIT_CHAIN_LOCK])
        holding()
        await new Promise<void>((resolve) => (release = resolve))
      })
      await held
      let regenerating: { reply: Promise<Reply> }
      let authorizing: { reply: Promise<Reply> }
      try {
        regenerating = await sendUntilItWaits(() => api(a, managementKey, 'POST', `/applications/${app.body.id}/regenerate`))
        authorizing = await sendUntilItWaits(() => api(b, app.body.key, 'POST', '/sessions/authorize', { nonce: session.body.nonce, permissions: ['token:read'] }))
      } finally {
        release()
        await holder
      }
      const [regenerated, authorized] = await Promise.all([regenerating.reply, authorizing.reply])
      expect(regenerated.status).toBe(200)
      expect([204, 401]).toContain(authorized.status)
      statuses.push(authorized.status)
      for (const server of [a, b]) expect((await api(server, session.body.session_key, 'GET', `/tokens/${token.body.id}`)).status).toBe(401)
    }
    // The order the lock sets up, regenerate first, was the one taken (in every round but for an untimely sweep of A's).
    expect(statuses).toContain(401)
  })
})
