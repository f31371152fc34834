import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import type { LogFilterQuery } from '@shared/ipc'
import type { EntityType, LogEntry } from '@shared/types'
import { api } from '@renderer/api'
import { datedFilename, downloadCsv } from '@renderer/composables/csv'
import { useAction } from '@renderer/composables/useAction'
import { usePagedList } from '@renderer/composables/usePagedList'

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

// Made once: `toLocaleTimeString` with options builds a formatter on every call, in the task that draws the first rows.
const HOUR_LABEL = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })
const DAY_LABEL = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' })

/**
 * Buckets covering [from, to): hourly up to two days, daily up to two months,
 * weekly beyond; never more than 62 of them.
 */
export function activityBuckets(from: number, to: number): Omit<ActivityBucket, 'count'>[] {
  const span = to - from
  const step = span <= 2 * DAY ? HOUR : span <= 62 * DAY ? DAY : 7 * DAY
  const buckets: Omit<ActivityBucket, 'count'>[] = []
  for (let start = from; start < to && buckets.length < 62; start += step) {
    const label = (step === HOUR ? HOUR_LABEL : DAY_LABEL).format(start)
    buckets.push({ start, end: Math.min(start + step, to), label })
  }
  return buckets
}

function noFilters(): LogFilters {
  return { entityType: null, entityId: '', range: null }
}

/** [from, to) in epoch ms of a date range; the end day is included whole. */
function periodOf(range: LogFilters['range']): [number, number] | undefined {
  return range ? [startOfDay(range[0]), startOfDay(range[1]) + DAY] : undefined
}

function filterQuery({ entityType, entityId, range }: LogFilters): LogFilterQuery {
  const query: LogFilterQuery = {}
  if (entityType) query.entity_type = entityType
  if (entityId.trim()) query.entity_id = entityId.trim()
  const period = periodOf(range)
  if (period) {
    query.start_date = new Date(period[0]).toISOString()
    query.end_date = new Date(period[1]).toISOString()
  }
  return query
}

/** The audit log: filters, one page of entries, the activity chart and the CSV export. */
export const useLogsStore = defineStore('logs', () => {
  const list = usePagedList<LogEntry, LogFilters>({
    name: 'Loading the audit log',
    noun: ['entry', 'entries'],
    filters: noFilters,
    fetch: (paging, filters) => api().logs.list({ ...filterQuery(filters), ...paging })
  })
  const { filters } = list
  const entityTypes = ref<EntityType[]>([])
  const activity = ref<ActivityBucket[]>([])
  const reading = useAction()
  const { busy: loadingActivity, run: runActivity } = useAction()
  const { busy: exporting, run: runExport } = useAction()

  const period = computed(() => periodOf(filters.value.range))

  async function loadEntityTypes(): Promise<void> {
    if (entityTypes.value.length) return
    await reading.run('Loading entity types', async () => {
      entityTypes.value = await api().logs.entityTypes()
    })
  }

  /** Counts per bucket, in one call (one read in the audit log, whatever the number of buckets). */
  async function loadActivity(): Promise<void> {
    await runActivity('Loading the activity chart', async () => {
      const [from, to] = period.value ?? [startOfDay(Date.now()) - (DEFAULT_ACTIVITY_DAYS - 1) * DAY, startOfDay(Date.now()) + DAY]
      const { start_date: _start, end_date: _end, ...rest } = filterQuery(filters.value)
      const buckets = activityBuckets(from, to)
      const counts = await api().logs.activity(
        rest,
        buckets.map((bucket) => [bucket.start, bucket.end])
      )
      activity.value = buckets.map((bucket, i) => ({ ...bucket, count: counts[i] ?? 0 }))
    })
  }

  /**
   * Applies the filters to the table, from its first page, then to the chart:
   * the rows are asked for first and shown without waiting for the chart to be counted and drawn.
   */
  async function search(): Promise<boolean> {
    const listed = await list.search()
    void loadActivity()
    return listed
  }

  // The opening of the view that `open` may join.
  let opening: Promise<boolean> | undefined

  /**
   * What the view reads as it opens: the entity types, then the first page and
   * the chart as `search` does. A second call while the first still reads joins
   * it: the route asks as soon as it is chosen, and the view again as it is set up.
   */
  function open(): Promise<boolean> {
    if (opening) return opening
    void loadEntityTypes()
    list.page.value = 1
    const listed = list.loadForView()
    const current = (opening = listed.finally(() => {
      if (opening === current) opening = undefined
    }))
    void listed.then(() => loadActivity())
    return current
  }

  function resetFilters(): Promise<boolean> {
    filters.value = noFilters()
    return search()
  }

  /** Every entry matching the filters (main sends at most 10,000), newest first, as CSV; main logs the export. */
  async function exportCsv(): Promise<void> {
    await runExport(
      'Exporting the audit log',
      async () => {
        const entries = await api().logs.export(filterQuery(filters.value))
        downloadCsv(datedFilename('audit-log'), entries as unknown as Record<string, unknown>[], [
          'created_at',
          'actor_type',
          'actor_id',
          'entity_type',
          'entity_id',
          'operation',
          'message',
          'count',
          'trace_id',
          'tenant_id'
        ])
        return entries.length
      },
      { success: (count) => ({ title: 'Audit log exported', detail: `${count.toLocaleString()} entries` }) }
    )
  }

  return { ...list, entityTypes, activity, loadingActivity, exporting, period, loadEntityTypes, loadActivity, search, open, resetFilters, exportCsv }
})
