import { defineStore } from 'pinia'
import type { OutboxMail } from '@shared/ipc'
import { api } from '@renderer/api'
import { usePagedList } from '@renderer/composables/usePagedList'

export interface OutboxFilters {
  status: 'PENDING' | 'SENT' | null
}

/** Invitation mail, waiting or sent; only its link is shown, for following an invitation offline. */
export const useOutboxStore = defineStore('outbox', () => {
  const list = usePagedList<OutboxMail, OutboxFilters>({
    name: 'Loading the outbox',
    noun: ['mail', 'mails'],
    filters: () => ({ status: null }),
    fetch: (paging, { status }) => api().outbox.list({ ...paging, ...(status ? { status } : {}) })
  })
  return { ...list }
})
