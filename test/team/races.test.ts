/**
 * Two `tessera serve` processes on one PostgreSQL database, as behind a load balancer:
 * requests racing on the two give one winner, and concurrent merge patches lose nothing.
 * (Sweeps and mail, which need a clock the test moves, are in test/team/sweeps.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, type Served } from '../helpers/cli'
import { startTeamVault, type TeamVault } from '../helpers/team'

const MERGE_PATCH = 'application/merge-patch+json'

interface Response {
  status: number
  body: any
}

describe('two tessera serve processes on one PostgreSQL database', { timeout: 90_000 }, () => {
  let team: TeamVault
  let servers: Served[]
  let adminKey: string
  let appKey: string

  beforeAll(async () => {
    team = await startTeamVault(2, {})
    ;({ instances: servers, managementKey: adminKey } = team)
    const app = await api(0, 'POST', '/applications', { key: adminKey, body: { name: 'payments', type: 'private', permissions: ['token:create', 'token:read', 'token:update'] } })
    expect(app.status).toBe(201)
    appKey = app.body.key
  }, 90_000)
  afterAll(() => team?.close())

  /** A request to instance `index` (0 is A, 1 is B). */
  async function api(index: number, method: string, path: string, { key = appKey, body, contentType = 'application/json' }: { key?: string; body?: unknown; contentType?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = { 'svc-api-key': key }
    if (body !== undefined) headers['content-type'] = contentType
    const response = await fetch(servers[index].url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await response.text()
    return { status: response.status, body: text ? JSON.parse(text) : undefined }
  }

  /** The same request sent `times` times at once, alternately to A and B. */
  function onBoth(times: number, request: (index: number, attempt: number) => Promise<Response>): Promise<Response[]> {
    return Promise.all(Array.from({ length: times }, (_, attempt) => request(attempt % 2, attempt)))
  }

  it('deduplicates creates of the same data racing on both instances into one token, which every caller gets', async () => {
    const stored = async () => (await api(1, 'GET', '/tokens?size=1')).body.pagination.total_items as number
    for (const data of ['same value 1', 'same value 2', 'same value 3']) {
      const before = await stored()
      const responses = await onBoth(6, (index) => api(index, 'POST', '/tokens', { body: { type: 'token', data, deduplicate_token: true } }))
      expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 200, 200, 200, 201])
      expect(new Set(responses.map((response) => response.body.id)).size).toBe(1)
      expect(await stored()).toBe(before + 1)
    }
  })

  it('creates a literal id racing on both instances once: one 201, the other 409', async () => {
    for (let round = 0; round < 4; round++) {
      const id = `literal-${round}`
      const responses = await onBoth(2, (index) => api(index, 'POST', '/tokens', { body: { id, type: 'token', data: `from ${index}` } }))
      expect(responses.map((response) => response.status).sort()).toEqual([201, 409])
      const stored = await api(0, 'GET', `/tokens/${id}`)
      const winner = responses.find((response) => response.status === 201)!
      expect(stored.body.data).toBe(winner.body.data)
    }
  })

  it('invites an e-mail address racing on both instances once: one 201, the other 409', async () => {
    for (let round = 0; round < 4; round++) {
      const email = `racer-${round}@example.com`
      const responses = await onBoth(2, (index) => api(index, 'POST', '/tenants/self/invitations', { key: adminKey, body: { email } }))
      expect(responses.map((response) => response.status).sort()).toEqual([201, 409])
    }
    const invitations = await api(1, 'GET', '/tenants/self/invitations?size=100', { key: adminKey })
    expect(invitations.body.data.map((invitation: { email: string }) => invitation.email).sort()).toEqual([0, 1, 2, 3].map((round) => `racer-${round}@example.com`))
  })

  it('applies concurrent merge patches of different metadata keys of one token on both instances without losing one', async () => {
    const created = await api(0, 'POST', '/tokens', { body: { type: 'token', data: 'patched', metadata: { origin: 'a' } } })
    expect(created.status).toBe(201)
    const keys = Array.from({ length: 12 }, (_, i) => `key${i}`)
    const responses = await onBoth(keys.length, (index, attempt) =>
      api(index, 'PATCH', `/tokens/${created.body.id}`, { body: { metadata: { [keys[attempt]]: `value ${attempt}` } }, contentType: MERGE_PATCH })
    )
    expect(responses.map((response) => response.status)).toEqual(keys.map(() => 200))
    for (const index of [0, 1]) {
      const read = await api(index, 'GET', `/tokens/${created.body.id}`)
      expect(read.body.metadata).toEqual({ origin: 'a', ...Object.fromEntries(keys.map((key, attempt) => [key, `value ${attempt}`])) })
    }
    // Filtering by a patched key finds it: the metadata index kept every patch too.
    const byKey = await api(1, 'GET', `/tokens?metadata.key0=${encodeURIComponent('value 0')}`)
    expect(byKey.body.data.map((token: { id: string }) => token.id)).toEqual([created.body.id])
  })

  it('keeps one audit chain that verifies after both instances wrote to it', async () => {
    const verify = await run(['logs', 'verify', '--data-dir', team.dirs[0], '--database-url', team.databaseUrl])
    expect(verify.stderr).toBe('')
    expect(verify.code).toBe(0)
  })
})
