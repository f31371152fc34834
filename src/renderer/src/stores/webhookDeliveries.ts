import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { Webhook, WebhookDelivery } from '@shared/types'
import { api } from '@renderer/api'
import { usePagedList } from '@renderer/composables/usePagedList'

export type DeliveryStatus = WebhookDelivery['status']

/** The states a delivery can be in, for the filter (the contract's list stays in the main bundle with zod). */
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'blocked']

export interface DeliveryFilters {
  status: DeliveryStatus | null
}

/** The delivery log of one webhook (the one whose log is open): newest first, with a status filter. */
export const useWebhookDeliveriesStore = defineStore('webhookDeliveries', () => {
  /** The webhook whose delivery log is open. */
  const webhook = ref<Webhook>()
  const list = usePagedList<WebhookDelivery, DeliveryFilters>({
    name: 'Loading deliveries',
    noun: ['delivery', 'deliveries'],
    filters: () => ({ status: null }),
    fetch: (paging, { status }) => api().webhooks.deliveries(webhook.value!.id, { ...paging, ...(status ? { status } : {}) })
  })

  /** Opens the log of `webhook` on its first page, whatever the filter was for the previous one. */
  function open(target: Webhook): Promise<boolean> {
    webhook.value = target
    list.items.value = []
    list.total.value = 0
    return list.resetFilters()
  }

  function close(): void {
    webhook.value = undefined
  }

  return { ...list, webhook, open, close }
})
