import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { OutboxListQuery, OutboxMail } from '@shared/ipc'
import { setApi } from '@renderer/api'
import { useOutboxStore } from '@renderer/stores/outbox'
import { fakeApi, pageOf } from '../fake-api'

const mail = (id: string): OutboxMail => ({ id, recipient: 'grace@example.com', subject: 'Join', status: 'PENDING', attempts: 0, created_at: '2026-11-25T10:00:00.000Z' })

describe('useOutboxStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => setApi(undefined))

  it('shows waiting or sent mail from the first page, counted as mails', async () => {
    const list = vi.fn(async (_query: OutboxListQuery) => pageOf([mail('o1')], 1))
    setApi(fakeApi({ outbox: { list } }))
    const store = useOutboxStore()
    await store.setFilters({ status: 'SENT' })
    expect(list).toHaveBeenLastCalledWith({ page: 1, size: 20, status: 'SENT' })
    expect(store.pagination.prefix()).toBe('1 mail')
    await store.resetFilters()
    expect(list).toHaveBeenLastCalledWith({ page: 1, size: 20 })
  })
})
