import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { LogFilterQuery, LogListQuery } from '@shared/ipc'
import { setApi } from '@renderer/api'
import { activityBuckets, useLogsStore } from '@renderer/stores/logs'
import { fakeApi } from '../fake-api'

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
  afterEach(() => setApi(undefined))

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
})
