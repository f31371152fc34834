import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import type { Page } from '@shared/types'
import { LOADING_SHOWN_AFTER_MS, PAGE_SIZES, usePagedList } from '@renderer/composables/usePagedList'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { problem } from '../fake-api'

interface Filters {
  status: string | null
}

/** A server holding `total` rows numbered from 1, filtered to even numbers when `status` is 'even'. */
function server(total: () => number) {
  return vi.fn(async ({ page, size }: { page: number; size: number }, filters: Filters): Promise<Page<number>> => {
    const rows = Array.from({ length: total() }, (_, i) => i + 1).filter((n) => filters.status !== 'even' || n % 2 === 0)
    return { pagination: { total_items: rows.length, page_number: page, page_size: size, total_pages: Math.ceil(rows.length / size) }, data: rows.slice((page - 1) * size, page * size) }
  })
}

function list(fetch: ReturnType<typeof server>) {
  return usePagedList<number, Filters>({ name: 'Loading rows', noun: ['row', 'rows'], filters: () => ({ status: null }), fetch })
}

describe('usePagedList', () => {
  beforeEach(() => setActivePinia(createPinia()))

  it('reads a page of the default size and counts the rows', async () => {
    const fetch = server(() => 45)
    const rows = list(fetch)
    // Before its first answer the table is not known to be empty: no count, no empty state.
    expect([rows.answered.value, rows.pagination.value.prefix()]).toEqual([false, ''])
    await rows.load()
    expect([rows.answered.value, rows.pagination.value.prefix()]).toEqual([true, '45 rows'])
    expect(fetch).toHaveBeenCalledWith({ page: 1, size: PAGE_SIZES[0] }, { status: null })
    expect(rows.items.value).toHaveLength(20)
    expect([rows.total.value, rows.pageCount.value]).toEqual([45, 3])
  })

  it('moves between pages, and goes back to page 1 when the page size changes', async () => {
    const fetch = server(() => 120)
    const rows = list(fetch)
    await rows.setPage(3)
    expect(rows.items.value[0]).toBe(41)
    await rows.setSize(50)
    expect([rows.page.value, rows.size.value, rows.items.value[0], rows.pageCount.value]).toEqual([1, 50, 1, 3])
  })

  it('goes back to page 1 whenever the filters change, and to the first filters on reset', async () => {
    const fetch = server(() => 120)
    const rows = list(fetch)
    await rows.setPage(4)
    await rows.setFilters({ status: 'even' })
    expect(fetch).toHaveBeenLastCalledWith({ page: 1, size: 20 }, { status: 'even' })
    expect([rows.total.value, rows.items.value[0]]).toEqual([60, 2])
    await rows.setPage(2)
    await rows.resetFilters()
    expect(rows.filters.value).toEqual({ status: null })
    expect([rows.page.value, rows.total.value]).toEqual([1, 120])
  })

  it('shows the page that is last now when the rows of the last page are gone', async () => {
    let total = 45
    const rows = list(server(() => total))
    await rows.setPage(3)
    total = 38
    await rows.load()
    expect(rows.page.value).toBe(2)
    expect(rows.items.value).toEqual(Array.from({ length: 18 }, (_, i) => 21 + i))
  })

  it('keeps what it shows and reports the failure as a toast when a read fails', async () => {
    const fetch = server(() => 5)
    const rows = list(fetch)
    fetch.mockRejectedValueOnce(problem(503, 'The vault is locked.'))
    await rows.load()
    // A first read that failed does not say the table is empty.
    expect(rows.answered.value).toBe(false)
    useNotificationsStore().drain()
    await rows.load()
    fetch.mockRejectedValueOnce(problem(503, 'The vault is locked.'))
    expect(await rows.load()).toBe(false)
    expect(rows.items.value).toEqual([1, 2, 3, 4, 5])
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'error', title: 'Loading rows failed', detail: 'The vault is locked.' })])
    expect(rows.loading.value).toBe(false)
  })

  it('keeps the rows it shows when the page it reads again has not changed, and takes a changed page', async () => {
    let total = 45
    const rows = list(server(() => total))
    await rows.load()
    const shown = rows.items.value
    await rows.load()
    // The same array: a table bound to it is not drawn again.
    expect(rows.items.value).toBe(shown)
    total = 10
    await rows.load()
    expect(rows.items.value).not.toBe(shown)
    expect(rows.items.value).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(rows.total.value).toBe(10)
  })

  it('fills the table with the latest read only, when an earlier one answers last', async () => {
    const answers: ((page: Page<number>) => void)[] = []
    const fetch = vi.fn(() => new Promise<Page<number>>((resolve) => answers.push(resolve)))
    const rows = usePagedList<number>({ name: 'Loading rows', noun: ['row', 'rows'], fetch })
    const page = (data: number[]): Page<number> => ({ pagination: { total_items: 100, page_number: 1, page_size: 20, total_pages: 5 }, data })
    const first = rows.setPage(1)
    const second = rows.setPage(2)
    expect(rows.loading.value).toBe(true)
    answers[1](page([21, 22]))
    await second
    answers[0](page([1, 2]))
    await first
    expect(rows.items.value).toEqual([21, 22])
    expect(rows.loading.value).toBe(false)
  })

  it('joins a read for a view that opens while the same page is on its way, and asks again for another page', async () => {
    const answers: ((page: Page<number>) => void)[] = []
    const fetch = vi.fn(() => new Promise<Page<number>>((resolve) => answers.push(resolve)))
    const rows = usePagedList<number>({ name: 'Loading rows', noun: ['row', 'rows'], fetch })
    const page = (data: number[]): Page<number> => ({ pagination: { total_items: 100, page_number: 1, page_size: 20, total_pages: 5 }, data })
    const byRoute = rows.loadForView()
    const byView = rows.loadForView()
    expect(fetch).toHaveBeenCalledTimes(1)
    answers[0](page([1, 2]))
    expect([await byRoute, await byView]).toEqual([true, true])
    expect(rows.items.value).toEqual([1, 2])

    // Once answered, the next opening reads again; so does a different page while one is on its way.
    const again = rows.loadForView()
    rows.page.value = 2
    const other = rows.loadForView()
    expect(fetch).toHaveBeenCalledTimes(3)
    answers[1](page([1, 2]))
    answers[2](page([21, 22]))
    await Promise.all([again, other])
    expect(rows.items.value).toEqual([21, 22])
  })

  it('shows a read as loading only once it has run for a while, and stops showing it as soon as it answers', async () => {
    vi.useFakeTimers()
    try {
      const answers: ((page: Page<number>) => void)[] = []
      const rows = usePagedList<number>({ name: 'Loading rows', noun: ['row', 'rows'], fetch: () => new Promise<Page<number>>((resolve) => answers.push(resolve)) })
      const page: Page<number> = { pagination: { total_items: 1, page_number: 1, page_size: 20, total_pages: 1 }, data: [1] }
      const quick = rows.load()
      await vi.advanceTimersByTimeAsync(LOADING_SHOWN_AFTER_MS - 1)
      expect([rows.loading.value, rows.loadingShown.value]).toEqual([true, false])
      answers[0](page)
      await quick
      await vi.advanceTimersByTimeAsync(LOADING_SHOWN_AFTER_MS)
      expect([rows.loading.value, rows.loadingShown.value]).toEqual([false, false])

      const slow = rows.load()
      await vi.advanceTimersByTimeAsync(LOADING_SHOWN_AFTER_MS)
      expect(rows.loadingShown.value).toBe(true)
      answers[1](page)
      await slow
      await vi.advanceTimersByTimeAsync(0)
      expect(rows.loadingShown.value).toBe(false)
    } finally {
      vi.useRealTimers()
    }
  })

  it('gives the table a pager with the page sizes, the row count and its handlers', async () => {
    const fetch = server(() => 1)
    const rows = list(fetch)
    await rows.load()
    const pager = rows.pagination.value
    expect(pager).toMatchObject({ page: 1, pageSize: 20, itemCount: 1, pageSizes: PAGE_SIZES, showSizePicker: true })
    expect(pager.prefix()).toBe('1 row')
    await pager.onUpdatePageSize(100)
    expect(fetch).toHaveBeenLastCalledWith({ page: 1, size: 100 }, { status: null })
    await pager.onUpdatePage(1)
    expect(rows.pagination.value.pageSize).toBe(100)
  })

  it('counts in the plural and with separators', async () => {
    const rows = list(server(() => 12_345))
    await rows.load()
    expect(rows.pagination.value.prefix()).toBe(`${(12_345).toLocaleString()} rows`)
  })

  it('shows a count that stopped at the limit as 10,000+', async () => {
    const rows = list(server(() => 10_001))
    await rows.load()
    expect(rows.pagination.value.prefix()).toBe(`${(10_000).toLocaleString()}+ rows`)
  })
})
