import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seedVault, type SeedResult } from '../../bench/scale-seed'
import { run, serve, terminate, type Served } from '../helpers/cli'

const TOKENS = 2_000
const LOG_ENTRIES = 20_000
const DAY = 86_400_000

interface Page<T> {
  data: T[]
  pagination: { total_items: number }
}

describe('the scale benchmark seeder', () => {
  let dir: string
  let dataDir: string
  let seed: SeedResult
  let server: Served
  let readerKey: string

  const get = async <T>(path: string, key = seed.managementKey): Promise<T> => {
    const response = await fetch(server.url + path, { headers: { 'svc-api-key': key } })
    expect(response.status, path).toBe(200)
    return (await response.json()) as T
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-seed-'))
    dataDir = join(dir, 'vault')
    seed = await seedVault(dataDir, TOKENS, LOG_ENTRIES)
  }, 120_000)

  afterAll(async () => {
    if (server) await terminate(server)
    await rm(dir, { recursive: true, force: true })
  })

  it('writes an audit chain that `tessera logs verify` finds intact', async () => {
    const verified = await run(['logs', 'verify', '--data-dir', dataDir])
    expect(verified.code, verified.stderr).toBe(0)
    const entries = Number(/Audit log intact: (\d+) entries/.exec(verified.stdout)?.[1])
    expect(entries).toBeGreaterThanOrEqual(LOG_ENTRIES)
    expect(seed).toMatchObject({ tokens: TOKENS, logEntries: LOG_ENTRIES })
  })

  it('leaves a vault the service lists: tokens by metadata group, entries by entity and date', async () => {
    server = await serve(dataDir)
    const reader = await fetch(server.url + '/applications', {
      method: 'POST',
      headers: { 'svc-api-key': seed.managementKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'reader', type: 'private', permissions: ['token:read'] })
    })
    readerKey = ((await reader.json()) as { key: string }).key

    const group = await get<Page<{ metadata: Record<string, string> }>>('/tokens?size=100&metadata.group=g7', readerKey)
    expect(group.pagination.total_items).toBe(TOKENS / 1000)
    expect(group.data.map((token) => token.metadata)).toEqual(Array(TOKENS / 1000).fill({ group: 'g7' }))

    const hot = await get<Page<{ entity_id: string }>>(`/logs?size=100&entity_type=token&entity_id=${seed.hotTokenId}`)
    expect(hot.pagination.total_items).toBe(seed.hotTokenEntries)
    expect(new Set(hot.data.map((entry) => entry.entity_id))).toEqual(new Set([seed.hotTokenId]))

    const all = await get<Page<unknown>>('/logs?size=1')
    expect(all.pagination.total_items).toBeGreaterThanOrEqual(LOG_ENTRIES)
    // The entries span the simulated history: one day of it holds a share of them, not all, not none.
    const start = new Date(Math.floor((seed.firstEntryAt + seed.lastEntryAt) / 2 / DAY) * DAY)
    const day = await get<Page<{ created_at: string }>>(`/logs?size=100&start_date=${start.toISOString()}&end_date=${new Date(start.getTime() + DAY).toISOString()}`)
    expect(day.pagination.total_items).toBeGreaterThan(0)
    expect(day.pagination.total_items).toBeLessThan(LOG_ENTRIES / 10)
    for (const entry of day.data) expect(Date.parse(entry.created_at) - start.getTime()).toBeLessThan(DAY)
  })
})
