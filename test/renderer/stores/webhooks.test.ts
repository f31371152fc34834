import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { WebhookDeliveryListQuery, WebhookRequest } from '@shared/ipc'
import type { Webhook, WebhookDelivery } from '@shared/types'
import { setApi } from '@renderer/api'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { useWebhookDeliveriesStore } from '@renderer/stores/webhookDeliveries'
import { useWebhooksStore } from '@renderer/stores/webhooks'
import { fakeApi, pageOf, problem } from '../fake-api'

const webhook = (id: string, name = 'Order system'): Webhook => ({
  id,
  tenant_id: 't',
  status: 'enabled',
  name,
  url: 'http://127.0.0.1:8080/events',
  events: ['token.created'],
  created_by: 'owner',
  created_at: '2026-11-26T10:00:00.000Z'
})
const body: WebhookRequest = { name: 'Order system', url: 'http://127.0.0.1:8080/events', events: ['token.created'] }

describe('useWebhooksStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => setApi(undefined))

  it('reads the event types once and the list on every load', async () => {
    const eventTypes = vi.fn(async () => ['token.created', 'token.deleted'])
    const list = vi.fn(async () => pageOf([webhook('w1')]))
    setApi(fakeApi({ webhooks: { eventTypes, list } }))
    const store = useWebhooksStore()
    await store.load()
    await store.load()
    expect(eventTypes).toHaveBeenCalledTimes(1)
    expect(list).toHaveBeenCalledTimes(2)
    expect(store.eventTypes).toEqual(['token.created', 'token.deleted'])
    expect(store.items.map((w) => w.id)).toEqual(['w1'])
  })

  it('keeps a refusal for the form and announces it without a toast; a success clears it and is toasted', async () => {
    const create = vi.fn().mockRejectedValueOnce(problem(422, 'A tenant may have at most 5 webhooks; delete one first.')).mockResolvedValueOnce(webhook('w6'))
    setApi(fakeApi({ webhooks: { create, list: vi.fn(async () => pageOf([webhook('w6')])) } }))
    const store = useWebhooksStore()
    const notifications = useNotificationsStore()
    expect(await store.create(body)).toBe(false)
    expect(store.formProblem?.detail).toBe('A tenant may have at most 5 webhooks; delete one first.')
    expect(notifications.queue).toEqual([])
    expect(notifications.announcement).toMatchObject({ politeness: 'assertive', text: expect.stringContaining('Creating the webhook failed') })
    expect(await store.create(body)).toBe(true)
    expect(store.formProblem).toBeUndefined()
    expect(notifications.drain().map((notice) => notice.title)).toEqual(['Webhook created'])
  })
})

describe('useWebhookDeliveriesStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => setApi(undefined))

  it("reads the open webhook's log, filtered from the first page, and starts unfiltered for the next webhook", async () => {
    const delivery = { id: 'd1', webhook_id: 'w1', event_id: 'e1', event_type: 'token.created', status: 'delivered', attempts: [], created_at: '2026-11-26T10:00:00.000Z' } as WebhookDelivery
    const deliveries = vi.fn(async (_id: string, _query: WebhookDeliveryListQuery) => pageOf([delivery], 45))
    setApi(fakeApi({ webhooks: { deliveries } }))
    const store = useWebhookDeliveriesStore()
    await store.open(webhook('w1'))
    expect(deliveries).toHaveBeenLastCalledWith('w1', { page: 1, size: 20 })
    await store.setPage(2)
    await store.setFilters({ status: 'blocked' })
    expect(deliveries).toHaveBeenLastCalledWith('w1', { page: 1, size: 20, status: 'blocked' })
    store.close()
    await store.open(webhook('w2'))
    expect(deliveries).toHaveBeenLastCalledWith('w2', { page: 1, size: 20 })
    expect(store.webhook?.id).toBe('w2')
  })
})
