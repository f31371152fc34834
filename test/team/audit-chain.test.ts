/**
 * One audit chain, several writers: two `tessera serve` processes on one team
 * vault append to it at once. Every request is answered, every entry is in
 * the chain exactly once, the chain verifies, and an entity's entries are all
 * found whichever instance wrote them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, type Served } from '../helpers/cli'
import { startTeamVault, type TeamVault } from '../helpers/team'

describe('a team vault served by two instances', { timeout: 120_000 }, () => {
  let team: TeamVault
  let databaseUrl: string
  let dirs: string[]
  let instances: Served[] = []
  let adminKey: string

  beforeAll(async () => {
    team = await startTeamVault(2, {})
    ;({ databaseUrl, dirs, instances, managementKey: adminKey } = team)
  })
  afterAll(() => team?.close())

  async function api(instance: number, key: string, method: string, path: string, body?: unknown) {
    const response = await fetch(instances[instance].url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: response.status, body: (await response.json()) as Record<string, any> }
  }

  it('answers writes on both at once, and the chain they share verifies with every entry', async () => {
    const app = await api(0, adminKey, 'POST', '/applications', { name: 'Both', type: 'private', permissions: ['token:create', 'token:read'] })
    expect(app.status).toBe(201)
    const key = app.body.key as string
    const before = (await api(1, adminKey, 'GET', '/logs?size=1')).body.pagination.total_items as number

    const created = await Promise.all(Array.from({ length: 60 }, (_, i) => api(i % 2, key, 'POST', '/tokens', { type: 'token', data: `value ${i}` })))
    expect(created.map((response) => response.status)).toEqual(Array(60).fill(201))
    // Each token read on the instance that did not create it, twice.
    const reads = await Promise.all(created.flatMap((response, i) => [0, 1].map(() => api((i + 1) % 2, key, 'GET', `/tokens/${response.body.id}`))))
    expect(reads.every((response) => response.status === 200)).toBe(true)

    // The first GET /logs of `before`, 60 creates and 120 reads, each logged once; this list is logged too.
    const after = (await api(0, adminKey, 'GET', '/logs?size=1')).body.pagination.total_items as number
    expect(after - before).toBe(1 + 60 + 120)

    for (const [i, response] of created.entries()) {
      if (i % 15 !== 0) continue
      const entries = await api(i % 2, adminKey, 'GET', `/logs?entity_type=token&entity_id=${response.body.id}`)
      expect(entries.body.data.map((entry: { operation: string }) => entry.operation).sort()).toEqual(['create', 'read', 'read'])
    }

    const verified = await run(['logs', 'verify', '--data-dir', dirs[1], '--database-url', databaseUrl])
    expect(verified.code).toBe(0)
    expect(verified.stdout).toMatch(/intact/i)
  })
})
