import { computed, getCurrentScope, onScopeDispose, ref, toRaw, watch, type Ref } from 'vue'
import type { Page } from '@shared/types'
import { formatTotal } from '@shared/pagination'
import { useAction } from './useAction'

/** The page sizes every table offers; the first is the default. */
export const PAGE_SIZES = [20, 50, 100]

/**
 * How long a read runs before the table shows it as loading. Most reads answer
 * sooner: showing and hiding the overlay for them would flicker, and its fade
 * in and out forces layouts that cost more than drawing the new rows.
 */
export const LOADING_SHOWN_AFTER_MS = 300

/** True once `source` has been true for `delayMs`; false as soon as it is false. */
function delayedFlag(source: Ref<boolean>, delayMs: number): Ref<boolean> {
  const shown = ref(false)
  let timer: ReturnType<typeof setTimeout> | undefined
  const stop = watch(source, (on) => {
    clearTimeout(timer)
    timer = on ? setTimeout(() => (shown.value = true), delayMs) : undefined
    if (!on) shown.value = false
  })
  if (getCurrentScope()) {
    onScopeDispose(() => {
      stop()
      clearTimeout(timer)
    })
  }
  return shown
}

export interface PagedListOptions<T, F> {
  /** Names the read in the error toast: "Loading tokens failed". */
  name: string
  /** What a row is, singular and plural, for the count beside the pager: "1 token", "41 tokens". */
  noun: readonly [string, string]
  /** Reads one page with the filters as they are now. */
  fetch: (paging: { page: number; size: number }, filters: F) => Promise<Page<T>>
  /** The filters when nothing is chosen; `resetFilters` goes back to them. */
  filters?: () => F
}

/** Whether two pages hold the same rows, field for field (rows are plain JSON from the main process). */
function samePage<T>(shown: T[], read: T[]): boolean {
  return shown.length === read.length && JSON.stringify(shown) === JSON.stringify(read)
}

/**
 * One server-side paged table: the page, its size, the total, the filters
 * and the reads. Changing the size or the filters goes back to page 1, and
 * `pagination` gives every table the same pager (page sizes, row count).
 * When the last page has emptied (its rows deleted, revoked or expired), the
 * page that is last now is shown instead.
 */
export function usePagedList<T, F extends object = Record<string, never>>(options: PagedListOptions<T, F>) {
  const initialFilters = options.filters ?? (() => ({}) as F)
  const items = ref([]) as Ref<T[]>
  const total = ref(0)
  const page = ref(1)
  const size = ref(PAGE_SIZES[0])
  const filters = ref(initialFilters()) as Ref<F>
  /** A read has filled the table: until then it is not known to be empty, and shows neither an empty state nor a count. */
  const answered = ref(false)
  const { busy: loading, run } = useAction()
  /** `loading` for the eye: only reads slower than LOADING_SHOWN_AFTER_MS show the overlay. */
  const loadingShown = delayedFlag(loading, LOADING_SHOWN_AFTER_MS)
  // Only the latest read may fill the table: an earlier one can answer last.
  let latest = 0

  const pageCount = computed(() => Math.max(1, Math.ceil(total.value / size.value)))

  function load(): Promise<boolean> {
    const read = ++latest
    const fetchPage = () => options.fetch({ page: page.value, size: size.value }, filters.value)
    return run(options.name, async () => {
      let result = await fetchPage()
      if (read !== latest) return
      if (result.data.length === 0 && page.value > 1) {
        page.value = Math.max(1, Math.ceil(result.pagination.total_items / size.value))
        result = await fetchPage()
        if (read !== latest) return
      }
      // A page that has not changed (a view shown again) keeps its rows: the table is not drawn again.
      if (!samePage(toRaw(items.value), result.data)) items.value = result.data
      total.value = result.pagination.total_items
      answered.value = true
    })
  }

  // The read `loadForView` may join: what it asked for, and its promise.
  let viewRead: { asked: string; done: Promise<boolean> } | undefined

  /**
   * Reads the page for a view that opens, joining a read of the same page and
   * filters that is already on its way instead of asking twice: the route asks
   * as soon as it is chosen, and the view again as it is set up.
   */
  function loadForView(): Promise<boolean> {
    const asked = JSON.stringify([page.value, size.value, filters.value])
    if (viewRead?.asked === asked) return viewRead.done
    const done = load()
    const current = { asked, done }
    viewRead = current
    void done.finally(() => {
      if (viewRead === current) viewRead = undefined
    })
    return done
  }

  function setPage(next: number): Promise<boolean> {
    page.value = next
    return load()
  }

  function setSize(next: number): Promise<boolean> {
    size.value = next
    return search()
  }

  /** Reads the first page with the filters as they are now. */
  function search(): Promise<boolean> {
    page.value = 1
    return load()
  }

  /** Changes some filters and reads the first page. */
  function setFilters(changes: Partial<F>): Promise<boolean> {
    filters.value = { ...filters.value, ...changes }
    return search()
  }

  function resetFilters(): Promise<boolean> {
    filters.value = initialFilters()
    return search()
  }

  const pagination = computed(() => ({
    page: page.value,
    pageSize: size.value,
    itemCount: total.value,
    pageSizes: PAGE_SIZES,
    showSizePicker: true,
    // The size menu is made only while open: a view kept for a return (AppShell.vue) leaves no hidden menu in the document.
    selectProps: { displayDirective: 'if' as const },
    prefix: () => (answered.value ? `${formatTotal(total.value)} ${options.noun[total.value === 1 ? 0 : 1]}` : ''),
    onUpdatePage: setPage,
    onUpdatePageSize: setSize
  }))

  return { items, answered, total, page, size, filters, loading, loadingShown, pageCount, pagination, load, loadForView, setPage, setSize, search, setFilters, resetFilters }
}
