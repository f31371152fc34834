import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Page } from '@shared/types'
import type { Token } from '@shared/types'
import { setApi } from '@renderer/api'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { REVEAL_DURATION_MS, useTokensStore } from '@renderer/stores/tokens'
import { fakeApi, problem } from '../fake-api'

const token = (id: string): Token => ({ id, tenant_id: 't', type: 'card', fingerprint: 'f', containers: ['/pci/'], data: { number: 'XXXXXXXXXXXX4242' } })
const page = (data: Token[], total = data.length): Page<Token> => ({ pagination: { total_items: total, page_number: 1, page_size: 20, total_pages: 1 }, data })

describe('useTokensStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => {
    setApi(undefined)
    vi.useRealTimers()
  })

  it('sends the filters as a typed query: types, one exact id a line (spaces and commas kept), metadata pairs', async () => {
    const list = vi.fn(async () => page([token('a')], 41))
    setApi(fakeApi({ tokens: { list } }))
    const store = useTokensStore()
    store.filters = { types: ['card'], ids: 'a, b\r\n\ncust-1001 verified', metadata: [{ key: ' customer ', value: 'cus_1' }, { key: '', value: 'ignored' }] }
    await store.search()
    expect(list).toHaveBeenCalledWith({ page: 1, size: 20, type: ['card'], id: ['a, b', 'cust-1001 verified'], metadata: { customer: 'cus_1' } })
    expect(store.total).toBe(41)
    expect(store.pageCount).toBe(3)
  })

  it('keeps revealed plaintext only for a limited time', async () => {
    vi.useFakeTimers()
    const reveal = vi.fn(async () => ({ ...token('a'), data: { number: '4242424242424242' } }))
    setApi(fakeApi({ tokens: { reveal } }))
    const store = useTokensStore()
    expect(await store.reveal('a', 'Support ticket')).toBe(true)
    expect(reveal).toHaveBeenCalledWith('a', 'Support ticket')
    expect(store.revealed?.data).toEqual({ number: '4242424242424242' })
    vi.advanceTimersByTime(REVEAL_DURATION_MS - 1)
    expect(store.revealed).toBeDefined()
    vi.advanceTimersByTime(1)
    expect(store.revealed).toBeUndefined()
  })

  it('announces a reveal and its hiding once each, whether the timer, the button or closing the panel hides it', async () => {
    vi.useFakeTimers()
    setApi(fakeApi({ tokens: { reveal: vi.fn(async () => token('a')) } }))
    const store = useTokensStore()
    const notifications = useNotificationsStore()
    const spoken: string[] = []
    const said = () => spoken.push(notifications.announcement!.text)
    await store.reveal('a', 'Support ticket')
    said()
    vi.advanceTimersByTime(REVEAL_DURATION_MS)
    said()
    const afterTimer = notifications.announcement!.id
    store.hide()
    store.closeDetail()
    expect(notifications.announcement!.id).toBe(afterTimer)
    await store.reveal('a', 'Support ticket')
    said()
    store.hide()
    said()
    expect(spoken).toEqual(['Plaintext shown for 30 seconds', 'Plaintext hidden', 'Plaintext shown for 30 seconds', 'Plaintext hidden'])
    expect(notifications.queue).toEqual([])
  })

  it('drops revealed plaintext when the detail panel closes', async () => {
    setApi(fakeApi({ tokens: { reveal: vi.fn(async () => token('a')), get: vi.fn(async () => token('a')) } }))
    const store = useTokensStore()
    await store.select('a')
    await store.reveal('a', 'why not')
    store.closeDetail()
    expect(store.revealed).toBeUndefined()
    expect(store.selected).toBeUndefined()
  })

  it('reports a failed call as an error toast with the problem detail', async () => {
    setApi(fakeApi({ tokens: { create: vi.fn(async () => Promise.reject(problem(400, 'The request has invalid fields.', { 'data.number': ['fails the Luhn check'] }))) } }))
    const store = useTokensStore()
    expect(await store.create({ type: 'card', data: { number: '1' } })).toBeUndefined()
    expect(useNotificationsStore().queue).toEqual([
      expect.objectContaining({ kind: 'error', title: 'Creating the token failed', detail: 'The request has invalid fields.', fields: ['data.number: fails the Luhn check'] })
    ])
  })

  it('steps back to the last page when the current one has emptied', async () => {
    const list = vi.fn(async (query: { page?: number }) => (query.page === 3 ? page([], 40) : page([token('a')], 40)))
    setApi(fakeApi({ tokens: { list } }))
    const store = useTokensStore()
    store.page = 3
    await store.load()
    expect(store.page).toBe(2)
    expect(store.items).toHaveLength(1)
  })
})
