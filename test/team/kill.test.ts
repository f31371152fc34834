/**
 * An instance of a team vault killed with `kill -9` in the middle of a burst
 * of writes loses none it acknowledged: every token it answered 201 for is
 * readable on the other instance, with its audit entry, and the audit chain
 * still verifies. The other instance keeps serving throughout, and the killed
 * one starts again on its data directory at once (nothing is left locked).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, type Served } from '../helpers/cli'
import { onPostgres } from '../helpers/postgres'
import { startTeamVault, type TeamVault } from '../helpers/team'

const WRITERS = 16
/** Acknowledged creates after which the instance is killed, with more in flight. */
const KILL_AFTER = 150

async function createToken(server: Served, key: string, n: number): Promise<string | undefined> {
  const response = await fetch(server.url + '/tokens', {
    method: 'POST',
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'token', data: `burst value ${n}`, metadata: { kind: 'burst', n: String(n) } })
  }).catch(() => undefined)
  if (response?.status !== 201) return undefined
  return ((await response.json()) as { id: string }).id
}

async function status(server: Served, key: string, path: string): Promise<number> {
  return (await fetch(server.url + path, { headers: { 'svc-api-key': key } })).status
}

// Always on PostgreSQL, whichever engine the API suite runs on: run once, in the node project.
describe.skipIf(onPostgres)('an instance of a team vault killed with kill -9', () => {
  let team: TeamVault
  let a: Served
  let b: Served
  let managementKey: string
  /** A private application's key that creates and reads tokens. */
  let key: string
  const acknowledged: string[] = []

  beforeAll(async () => {
    team = await startTeamVault()
    ;[a, b] = team.instances
    managementKey = team.managementKey
    const application = await fetch(b.url + '/applications', {
      method: 'POST',
      headers: { 'svc-api-key': managementKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'writer', type: 'private', permissions: ['token:create', 'token:read'] })
    })
    key = ((await application.json()) as { key: string }).key

    // Writers keep creating on A until it dies; A is killed once KILL_AFTER creates are acknowledged.
    let next = 0
    const writer = async (): Promise<void> => {
      // Bounded, so that a service refusing every create fails the test instead of looping.
      while (a.child.exitCode === null && a.child.signalCode === null && next < 20 * KILL_AFTER) {
        const id = await createToken(a, key, next++)
        if (id) acknowledged.push(id)
        if (acknowledged.length >= KILL_AFTER && !a.child.killed) a.child.kill('SIGKILL')
      }
    }
    await Promise.all(Array.from({ length: WRITERS }, writer))
  }, 120_000)

  afterAll(() => team?.close())

  it('was killed with requests in flight', () => {
    expect(a.child.signalCode).toBe('SIGKILL')
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER)
  })

  it('loses no write it acknowledged: every token is readable on the other instance', async () => {
    const statuses = await Promise.all(acknowledged.map((id) => status(b, key, `/tokens/${encodeURIComponent(id)}`)))
    expect(statuses.filter((code) => code !== 200)).toEqual([])
  })

  /** Every item of a v1 list, page by page. */
  async function listAll<T>(server: Served, apiKey: string, path: string): Promise<T[]> {
    const items: T[] = []
    for (let page = 1; ; page++) {
      const response = await fetch(`${server.url}${path}&size=100&page=${page}`, { headers: { 'svc-api-key': apiKey } })
      const body = (await response.json()) as { data: T[] }
      items.push(...body.data)
      if (body.data.length < 100) return items
    }
  }

  it('wrote each token with its audit entry or not at all, and the chain verifies', async () => {
    const entries = await listAll<{ entity_id: string; operation: string }>(b, managementKey, '/logs?entity_type=token')
    const created = new Set(entries.filter((entry) => entry.operation === 'create').map((entry) => entry.entity_id))
    expect(acknowledged.filter((id) => !created.has(id))).toEqual([])
    // Requests in flight when A died: their tokens exist only together with their entries.
    const stored = await listAll<{ id: string }>(b, key, '/tokens?metadata.kind=burst')
    expect(stored.length).toBeGreaterThanOrEqual(acknowledged.length)
    expect(stored.filter((token) => !created.has(token.id))).toEqual([])
    const verify = await run(['logs', 'verify', '--data-dir', team.dirs[1], '--database-url', team.databaseUrl])
    expect(verify.code, verify.stdout + verify.stderr).toBe(0)
  })

  it('leaves the other instance serving, and the killed one starts again at once', async () => {
    const onB = await createToken(b, key, -1)
    expect(onB).toBeDefined()
    const restarted = await team.serveAgain(team.dirs[0])
    expect(await status(restarted, key, `/tokens/${encodeURIComponent(onB!)}`)).toBe(200)
  })
})
