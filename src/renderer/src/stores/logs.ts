import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import type { LogFilterQuery } from '@shared/ipc'
import type { EntityType, LogEntry } from '@shared/types'
import { api } from '@renderer/api'
import { datedFilename, downloadCsv } from '@renderer/composables/csv'
import { useNotificationsStore } from './notifications'

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** Days the activity chart covers when no date range is chosen. */
export const DEFAULT_ACTIVITY_DAYS = 14

export interface LogFilters {
  entityType: string | null
  entityId: string
  /** Start and end days (epoch ms, local midnight) inclusive, as the date-range picker gives them. */
  range: [number, number] | null
}

export interface ActivityBucket {
  start: number
  end: number
  label: string
  count: number
}

function startOfDay(ms: number): number {
  const date = new Date(ms)
  date.setHours(0, 0, 0, 0)
  return date.getTime()
}

/**
 * Buckets covering [from, to): hourly up to two days, daily up to two months,
 * weekly beyond; never more than 62 of them.
 */
export function activityBuckets(from: number, to: number): Omit<ActivityBucket, 'count'>[] {
  const span = to - from
  const step = span <= 2 * DAY ? HOUR : span <= 62 * DAY ? DAY : 7 * DAY
  const buckets: Omit<ActivityBucket, 'count'>[] = []
  for (let start = from; start < to && buckets.length < 62; start += step) {
    const date = new Date(start)
    const label =
      step === HOUR
        ? date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
        : date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })
    buckets.push({ start, end: Math.min(start + step, to), label })
  }
  return buckets
}

/** The audit log: filters, one page of entries, the activity chart and the CSV export. */
export const useLogsStore = defineStore('logs', () => {
  const filters = ref<LogFilters>({ entityType: null, entityId: '', range: null })
  const page = ref(1)
  const size = ref(20)
  const total = ref(0)
  const items = ref<LogEntry[]>([])
  const loading = ref(false)
  const entityTypes = ref<EntityType[]>([])
  const activity = ref<ActivityBucket[]>([])
  const loadingActivity = ref(false)
  const exporting = ref(false)

  /** [from, to) in epoch ms; the end day is included whole. */
  const period = computed<[number, number] | undefined>(() =>
    filters.value.range ? [startOfDay(filters.value.range[0]), startOfDay(filters.value.range[1]) + DAY] : undefined
  )

  function baseQuery(): LogFilterQuery {
    const query: LogFilterQuery = {}
    if (filters.value.entityType) query.entity_type = filters.value.entityType
    if (filters.value.entityId.trim()) query.entity_id = filters.value.entityId.trim()
    if (period.value) {
      query.start_date = new Date(period.value[0]).toISOString()
      query.end_date = new Date(period.value[1]).toISOString()
    }
    return query
  }

  async function load(): Promise<void> {
    loading.value = true
    try {
      const result = await api().logs.list({ ...baseQuery(), page: page.value, size: size.value })
      items.value = result.data
      total.value = result.pagination.total_items
    } catch (error) {
      useNotificationsStore().reportError(error, 'Loading the audit log')
    } finally {
      loading.value = false
    }
  }

  async function loadEntityTypes(): Promise<void> {
    if (entityTypes.value.length) return
    try {
      entityTypes.value = await api().logs.entityTypes()
    } catch (error) {
      useNotificationsStore().reportError(error, 'Loading entity types')
    }
  }

  /** Counts per bucket, in one call (one read in the audit log, whatever the number of buckets). */
  async function loadActivity(): Promise<void> {
    loadingActivity.value = true
    try {
      const [from, to] = period.value ?? [startOfDay(Date.now()) - (DEFAULT_ACTIVITY_DAYS - 1) * DAY, startOfDay(Date.now()) + DAY]
      const { start_date: _start, end_date: _end, ...rest } = baseQuery()
      const buckets = activityBuckets(from, to)
      const counts = await api().logs.activity(
        rest,
        buckets.map((bucket) => [bucket.start, bucket.end])
      )
      activity.value = buckets.map((bucket, i) => ({ ...bucket, count: counts[i] ?? 0 }))
    } catch (error) {
      useNotificationsStore().reportError(error, 'Loading the activity chart')
    } finally {
      loadingActivity.value = false
    }
  }

  function search(): Promise<void> {
    page.value = 1
    void loadActivity()
    return load()
  }

  function resetFilters(): Promise<void> {
    filters.value = { entityType: null, entityId: '', range: null }
    return search()
  }

  /** Every entry matching the filters (main sends at most 10,000), newest first, as CSV; main logs the export. */
  async function exportCsv(): Promise<void> {
    exporting.value = true
    try {
      const entries = await api().logs.export(baseQuery())
      downloadCsv(datedFilename('audit-log'), entries as unknown as Record<string, unknown>[], [
        'created_at',
        'actor_type',
        'actor_id',
        'entity_type',
        'entity_id',
        'operation',
        'message',
        'count',
        'tenant_id'
      ])
      useNotificationsStore().notify('Audit log exported', `${entries.length.toLocaleString()} entries`)
    } catch (error) {
      useNotificationsStore().reportError(error, 'Exporting the audit log')
    } finally {
      exporting.value = false
    }
  }

  return {
    filters,
    page,
    size,
    total,
    items,
    loading,
    entityTypes,
    activity,
    loadingActivity,
    exporting,
    period,
    load,
    loadEntityTypes,
    loadActivity,
    search,
    resetFilters,
    exportCsv
  }
})
