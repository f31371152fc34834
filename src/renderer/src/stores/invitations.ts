import { defineStore } from 'pinia'
import type { TenantInvitation } from '@shared/types'
import { api } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'
import { usePagedList } from '@renderer/composables/usePagedList'
import { useOutboxStore } from './outbox'

export interface InvitationFilters {
  status: 'PENDING' | 'EXPIRED' | null
}

/** Invitations of new members, with a status filter; each change also puts mail in the outbox. */
export const useInvitationsStore = defineStore('invitations', () => {
  const list = usePagedList<TenantInvitation, InvitationFilters>({
    name: 'Loading invitations',
    noun: ['invitation', 'invitations'],
    filters: () => ({ status: null }),
    fetch: (paging, { status }) => api().invitations.list({ ...paging, ...(status ? { status } : {}) })
  })
  const { run } = useAction()
  const outbox = useOutboxStore()
  const reloadWithOutbox = () => Promise.all([list.load(), outbox.load()])

  function invite(email: string): Promise<boolean> {
    return run('Inviting', () => api().invitations.create({ email }), {
      success: (invitation) => ({ title: 'Invitation created', detail: `A mail to ${invitation.email} is in the outbox.` }),
      after: reloadWithOutbox
    })
  }

  function resend(invitation: TenantInvitation): Promise<boolean> {
    return run('Resending the invitation', () => api().invitations.resend(invitation.id), {
      success: () => ({ title: 'Invitation sent again', detail: 'Earlier links no longer work.' }),
      after: reloadWithOutbox
    })
  }

  function remove(invitation: TenantInvitation): Promise<boolean> {
    return run('Deleting the invitation', () => api().invitations.delete(invitation.id), {
      success: () => ({ title: 'Invitation deleted', detail: 'Its links no longer work.' }),
      after: reloadWithOutbox
    })
  }

  return { ...list, invite, resend, remove }
})
