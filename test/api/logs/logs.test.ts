import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { onPostgres } from '../../helpers/postgres'
import { startTestService, type TestService } from '../../helpers/service'

describe('logs', () => {
  let service: TestService
  let adminId: string
  let times: string[]
  let appIds: string[]
  /** Keys without log:read (a management and a private one), made before the timed entries. */
  let noLogKeys: string[]

  beforeAll(async () => {
    service = await startTestService()
    adminId = (await service.request('GET', '/applications/key')).body.id
    noLogKeys = [
      (await service.createApplication({ name: 'No logs', type: 'management', permissions: ['application:read'] })).key,
      (await service.createApplication({ name: 'Backend', type: 'private', permissions: ['token:read'] })).key
    ]
    // One application created at each of three known times, an hour apart.
    times = ['2026-12-01T00:00:00.000Z', '2026-12-01T01:00:00.000Z', '2026-12-01T02:00:00.000Z']
    appIds = []
    for (const time of times) {
      service.clock.set(time)
      appIds.push((await service.createApplication({ name: `at ${time}`, type: 'private', permissions: ['token:read'] })).id)
    }
  })
  afterAll(() => service.stop())

  /**
   * Runs the `index-logs` sweep: on SQLite it folds at least `atLeast` entries past its mark
   * into the entity index. A team vault's entity index is written with each entry: nothing to fold.
   */
  const foldEntityIndex = async (atLeast: number) => {
    const folded = (await service.host.vault.services.jobs.runDueJobs()).find((result) => result.name === 'index-logs')?.processed ?? 0
    if (onPostgres) expect(folded).toBe(0)
    else expect(folded).toBeGreaterThanOrEqual(atLeast)
  }
  const createdApps = (query: string) => service.request('GET', `/logs?entity_type=application&${query}`)

  describe('GET /logs', () => {
    it('lists entries newest first, with actor and entity', async () => {
      const response = await service.request('GET', '/logs?size=100')
      expect(response.status).toBe(200)
      const entries = response.body.data
      const stamps = entries.map((entry: { created_at: string }) => entry.created_at)
      expect(stamps).toEqual([...stamps].sort().reverse())
      expect(entries.slice(0, 3)).toEqual(
        [...appIds].reverse().map((id, index) => ({
          tenant_id: service.tenantId,
          actor_id: adminId,
          actor_type: 'application',
          entity_type: 'application',
          entity_id: id,
          operation: 'create',
          message: expect.stringMatching(/^Application created with key [0-9a-f-]{36}$/),
          created_at: times[2 - index],
          trace_id: expect.stringMatching(/^[0-9a-f-]{36}$/)
        }))
      )
      // init's own entries come last: the tenant and its first application, created by the owner.
      expect(entries.at(-1)).toMatchObject({ entity_type: 'tenant', actor_type: 'user', actor_id: service.ownerUserId })
    })

    it('filters by entity_type', async () => {
      const response = await service.request('GET', '/logs?entity_type=tenant')
      expect(response.status).toBe(200)
      expect(response.body.data).toHaveLength(1)
      expect(response.body.data[0]).toMatchObject({ entity_type: 'tenant', entity_id: service.tenantId, operation: 'create' })
    })

    it('filters by entity_id', async () => {
      const response = await service.request('GET', `/logs?entity_id=${appIds[1]}`)
      expect(response.body.data.map((entry: { entity_id: string }) => entry.entity_id)).toEqual([appIds[1]])
      expect(response.body.pagination.total_items).toBe(1)
    })

    it('keeps entries at or after start_date (inclusive)', async () => {
      const response = await createdApps(`start_date=${times[1]}`)
      expect(response.status).toBe(200)
      expect(response.body.data.map((entry: { entity_id: string }) => entry.entity_id)).toEqual([appIds[2], appIds[1]])
    })

    it('keeps entries before end_date (exclusive)', async () => {
      const response = await createdApps(`end_date=${times[1]}&start_date=${times[0]}`)
      expect(response.body.data.map((entry: { entity_id: string }) => entry.entity_id)).toEqual([appIds[0]])
    })

    it('combines start_date and end_date into a half-open range', async () => {
      const response = await createdApps(`start_date=${times[1]}&end_date=${times[2]}`)
      expect(response.body.data.map((entry: { entity_id: string }) => entry.entity_id)).toEqual([appIds[1]])
      const between = await createdApps('start_date=2026-12-01T00:00:00.001Z&end_date=2026-12-01T00:59:59.999Z')
      expect(between.body.data).toEqual([])
    })

    it('takes dates with an offset', async () => {
      const response = await createdApps('start_date=2026-12-01T02:00:00%2B01:00&end_date=2026-12-01T02:00:00%2B00:00')
      expect(response.body.data.map((entry: { entity_id: string }) => entry.entity_id)).toEqual([appIds[1]])
    })

    it('pages through the entries', async () => {
      const first = await createdApps(`start_date=${times[0]}&size=2`)
      expect(first.body.pagination).toEqual({ total_items: 3, page_number: 1, page_size: 2, total_pages: 2 })
      expect(first.body.data.map((entry: { entity_id: string }) => entry.entity_id)).toEqual([appIds[2], appIds[1]])
      const second = await createdApps(`start_date=${times[0]}&size=2&page=2`)
      expect(second.body.data.map((entry: { entity_id: string }) => entry.entity_id)).toEqual([appIds[0]])
      const beyond = await createdApps(`start_date=${times[0]}&size=2&page=3`)
      expect(beyond.status).toBe(200)
      expect(beyond.body.data).toEqual([])
    })

    it('defaults to page 1 of 20', async () => {
      const response = await service.request('GET', '/logs')
      expect(response.body.pagination).toMatchObject({ page_number: 1, page_size: 20 })
    })

    it.each([
      ['start_date=yesterday', 'start_date'],
      ['start_date=12/01/2026', 'start_date'],
      ['end_date=2026-13-45T00:00:00Z', 'end_date'],
      // In the year 10000 and before year 0 in UTC: no ISO 8601 date-time could show them in the read's entry.
      ['start_date=9999-12-31T23:00:00-14:00', 'start_date'],
      ['end_date=0000-01-01T00:00:00%2B01:00', 'end_date'],
      ['page=0', 'page'],
      ['size=0', 'size'],
      ['size=101', 'size'],
      ['page=one', 'page'],
      ['actor_id=x', 'actor_id']
    ])('rejects ?%s with 400 naming %s', async (query, field) => {
      const response = await service.request('GET', `/logs?${query}`)
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(response.body.errors).toHaveProperty(field)
    })

    it('takes the first and last dates an ISO 8601 date-time can state in UTC', async () => {
      const response = await service.request('GET', '/logs?start_date=0000-01-01T00:00:00Z&end_date=9999-12-31T23:59:59.999Z&size=1')
      expect(response.status).toBe(200)
      expect(response.body.data).toHaveLength(1)
    })

    it('rejects a key without log:read with 403', async () => {
      for (const key of noLogKeys) expect((await service.request('GET', '/logs', { key })).status).toBe(403)
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('GET', '/logs', { key: null })).status).toBe(401)
    })

    it('logs each read of the log with the reader as actor, naming filters without copying caller text', async () => {
      await service.request('GET', '/logs?entity_type=application&entity_id=4242424242424242&start_date=2026-12-01T00:00:00Z&size=2', { headers: { 'bt-trace-id': 'audit-review' } })
      const [read] = (await service.request('GET', '/logs?entity_type=log&size=1')).body.data
      expect(read).toEqual({
        tenant_id: service.tenantId,
        actor_id: adminId,
        actor_type: 'application',
        entity_type: 'log',
        entity_id: service.tenantId,
        operation: 'read',
        message: 'Audit log listed: page 1, 0 of 0 entries, filtered by entity type application, an entity id, from 2026-12-01T00:00:00.000Z',
        created_at: expect.any(String),
        trace_id: 'audit-review'
      })
      expect(read.message).not.toContain('4242') // the ids beside it are random and may hold any four digits
    })

    it('counts its own read once it has answered', async () => {
      const before = (await service.request('GET', '/logs')).body.pagination.total_items
      const after = (await service.request('GET', '/logs')).body.pagination.total_items
      expect(after).toBe(before + 1)
    })
  })

  describe('entity filters across the entity index and the entries not yet in it', () => {
    it('finds every entry of an entity, newest first, before and after the index catches up', async () => {
      const tokenKey = (await service.createApplication({ name: 'Reader', type: 'private', permissions: ['token:create', 'token:read'] })).key
      const id = (await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: 'indexed' } })).body.id
      const readTimes = async (count: number) => {
        for (let i = 0; i < count; i++) {
          service.clock.advance(1_000)
          expect((await service.request('GET', `/tokens/${id}`, { key: tokenKey })).status).toBe(200)
        }
      }
      const entries = async (query = '') => (await service.request('GET', `/logs?entity_type=token&entity_id=${id}${query}`)).body

      await readTimes(3)
      const beforeFold = await entries()
      expect(beforeFold.data.map((entry: { operation: string }) => entry.operation)).toEqual(['read', 'read', 'read', 'create'])

      service.clock.advance(5_000)
      await foldEntityIndex(4)
      expect(await entries()).toEqual(beforeFold)

      await readTimes(2) // two more, past the index's mark
      const all = await entries()
      expect(all.pagination.total_items).toBe(6)
      expect(all.data.map((entry: { operation: string }) => entry.operation)).toEqual(['read', 'read', 'read', 'read', 'read', 'create'])
      const stamps = all.data.map((entry: { created_at: string }) => entry.created_at)
      expect(stamps).toEqual([...stamps].sort().reverse())
      // Pages cut across the mark without losing or repeating an entry.
      const pages = [...(await entries('&size=4&page=1')).data, ...(await entries('&size=4&page=2')).data]
      expect(pages).toEqual(all.data)
      expect((await service.request('GET', `/logs?entity_id=${id}`)).body.pagination.total_items).toBe(6)
    })
  })

  describe('an entity with more entries than a page', () => {
    type Entry = { entity_id: string; created_at: string; operation: string }

    it('pages through all of them newest first, in the order of the whole log, across the index mark and a clock set back', async () => {
      const tokenKey = (await service.createApplication({ name: 'Busy reader', type: 'private', permissions: ['token:create', 'token:read'] })).key
      const id = (await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: 'busy' } })).body.id
      const read = async (count: number) => {
        for (let i = 0; i < count; i++) {
          service.clock.advance(1_000)
          expect((await service.request('GET', `/tokens/${id}`, { key: tokenKey })).status).toBe(200)
        }
      }
      await read(120)
      // The clock goes back an hour: these entries come later in the chain but are older.
      service.clock.advance(-3_600_000)
      await read(15)
      service.clock.advance(5_000)
      await foldEntityIndex(1)
      service.clock.advance(-1_800_000)
      await read(10) // past the index's mark, older still

      const pageOf = async (query: string) => (await service.request('GET', `/logs?entity_type=token&entity_id=${id}&${query}`)).body
      const first = await pageOf('size=100&page=1')
      const second = await pageOf('size=100&page=2')
      expect(first.pagination).toMatchObject({ total_items: 146, total_pages: 2 })
      const byEntity: Entry[] = [...first.data, ...second.data]
      expect(byEntity).toHaveLength(146)
      // The same entries, in the same order, as the whole log shows them.
      const wholeLog: Entry[] = []
      for (let page = 1; page === 1 || wholeLog.length === (page - 1) * 100; page++) wholeLog.push(...(await service.request('GET', `/logs?entity_type=token&size=100&page=${page}`)).body.data)
      expect(byEntity).toEqual(wholeLog.filter((entry) => entry.entity_id === id))
      const stamps = byEntity.map((entry) => entry.created_at)
      expect(stamps).toEqual([...stamps].sort().reverse())
      // Without the type, and with a date range cutting through them.
      expect((await service.request('GET', `/logs?entity_id=${id}&size=100&page=2`)).body.data).toEqual(second.data)
      const since = stamps[59]
      const recent = (await service.request('GET', `/logs?entity_type=token&entity_id=${id}&size=100&start_date=${since}`)).body
      expect(recent.data).toEqual(byEntity.filter((entry) => entry.created_at >= since))
      expect(recent.pagination.total_items).toBe(recent.data.length)
    })
  })

  describe.skipIf(onPostgres)('the entity index after a burst', () => {
    it('takes in a batch of new entries at the next look, without waiting for its interval', async () => {
      const jobs = service.host.vault.services.jobs
      const tokenKey = (await service.createApplication({ name: 'Bulk', type: 'private', permissions: ['token:create'] })).key
      service.clock.advance(5_000)
      await jobs.runDueJobs() // the index is caught up and its interval starts now
      const folded = async () => (await jobs.runDueJobs()).find((result) => result.name === 'index-logs')?.processed
      const tokenize = async (count: number): Promise<string[]> => {
        const values = Array.from({ length: count }, (_, i) => `burst-${count}-${i}`)
        const response = await service.request('POST', '/tokenize', { key: tokenKey, body: values })
        expect(response.status).toBe(200)
        return response.body as string[] // each plain value answered by its token's id
      }

      await tokenize(10)
      expect(await folded()).toBeUndefined() // a few entries wait for the interval
      await tokenize(1_000)
      const [last] = (await tokenize(1_000)).slice(-1)
      expect(await folded()).toBeGreaterThanOrEqual(2_010)
      const entries = (await service.request('GET', `/logs?entity_type=token&entity_id=${last}`)).body.data
      expect(entries).toMatchObject([{ entity_id: last, operation: 'create' }])
    })
  })

  describe('total_items', () => {
    const totalOf = async (query = '') => (await service.request('GET', `/logs?size=1&${query}`)).body.pagination.total_items as number
    const everDates = 'start_date=2000-01-01T00:00:00Z&end_date=2100-01-01T00:00:00Z'

    it('counts every entry, the vault creation ones included, the same way from the counters as through the index', async () => {
      // Each read of the log adds its own entry after answering: one more per call.
      const fromCounters = await totalOf()
      expect(await totalOf(everDates)).toBe(fromCounters + 1)
      const types = (await service.request('GET', '/logs/entity-types')).body.map((type: { value: string }) => type.value)
      const byType: number[] = []
      for (const type of types) byType.push(await totalOf(`entity_type=${type}`))
      // Reads of the log are entries of type `log`: the `log` count holds those of the three calls above and of the types listed before it.
      const logReads = 3 + types.indexOf('log')
      expect(byType.reduce((sum, count) => sum + count, 0)).toBe(fromCounters + logReads)
      expect(await totalOf(`entity_type=application&${everDates}`)).toBe(byType[types.indexOf('application')])
    })

    it('reports more than 10,000 entries matching dates as 10,001', { timeout: 240_000 }, async () => {
      const app = await service.createApplication({ name: 'Bulk', type: 'private', permissions: ['token:create'] })
      service.clock.set('2027-01-01T00:00:00.000Z')
      for (let start = 0; start < 10_050; start += 1_000) {
        const values = Array.from({ length: Math.min(1_000, 10_050 - start) }, (_, i) => `v${start + i}`)
        expect((await service.request('POST', '/tokenize', { key: app.key, body: values })).status).toBe(200)
      }
      const response = await service.request('GET', '/logs?size=100&start_date=2027-01-01T00:00:00Z&end_date=2027-01-02T00:00:00Z')
      expect(response.body.pagination).toEqual({ total_items: 10_001, page_number: 1, page_size: 100, total_pages: 101 })
      expect(response.body.data).toHaveLength(100)
      expect(await totalOf('entity_type=token&start_date=2027-01-01T00:00:00Z')).toBe(10_001)
      expect(await totalOf('entity_type=token')).toBeGreaterThanOrEqual(10_050)
    })
  })

  describe('GET /logs/entity-types', () => {
    it('lists the entity types as display name and value', async () => {
      const response = await service.request('GET', '/logs/entity-types')
      expect(response.status).toBe(200)
      expect(Array.isArray(response.body)).toBe(true)
      for (const entry of response.body) expect(entry).toEqual({ display_name: expect.any(String), value: expect.any(String) })
      const values = response.body.map((entry: { value: string }) => entry.value)
      expect(values).toEqual(expect.arrayContaining(['application', 'card', 'bank', 'token', 'log', 'request', 'vault', 'settings']))
    })

    it('is logged as a read of the log', async () => {
      await service.request('GET', '/logs/entity-types')
      const [read] = (await service.request('GET', '/logs?entity_type=log&size=1')).body.data
      expect(read).toMatchObject({ actor_id: adminId, entity_type: 'log', operation: 'read', message: 'Audit log entity types listed' })
    })

    it('takes the first and last dates an ISO 8601 date-time can state in UTC', async () => {
      const response = await service.request('GET', '/logs?start_date=0000-01-01T00:00:00Z&end_date=9999-12-31T23:59:59.999Z&size=1')
      expect(response.status).toBe(200)
      expect(response.body.data).toHaveLength(1)
    })

    it('rejects a key without log:read with 403', async () => {
      for (const key of noLogKeys) expect((await service.request('GET', '/logs/entity-types', { key })).status).toBe(403)
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('GET', '/logs/entity-types', { key: null })).status).toBe(401)
    })
  })
})
