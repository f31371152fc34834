import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { OutboxMail } from '@shared/ipc'
import type { TenantInvitation, TenantMember } from '@shared/types'
import { api } from '@renderer/api'
import { useNotificationsStore } from './notifications'

interface Paged<T> {
  items: T[]
  total: number
  page: number
  size: number
}

function paged<T>(): Paged<T> {
  return { items: [], total: 0, page: 1, size: 20 }
}

/** Members of the tenant, invitations (with a status filter) and the outbox of invitation mail. */
export const useMembersStore = defineStore('members', () => {
  const members = ref<Paged<TenantMember>>(paged())
  const invitations = ref<Paged<TenantInvitation>>(paged())
  const invitationStatus = ref<'PENDING' | 'EXPIRED' | null>(null)
  const outbox = ref<Paged<OutboxMail>>(paged())
  const outboxStatus = ref<'PENDING' | 'SENT' | null>(null)
  const loading = ref(false)

  async function attempt<T>(action: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work()
    } catch (error) {
      useNotificationsStore().reportError(error, action)
      return undefined
    }
  }

  async function loadMembers(): Promise<void> {
    const { page, size } = members.value
    const result = await attempt('Loading members', () => api().members.list({ page, size }))
    if (result) members.value = { ...members.value, items: result.data, total: result.pagination.total_items }
  }

  async function loadInvitations(): Promise<void> {
    const { page, size } = invitations.value
    const result = await attempt('Loading invitations', () =>
      api().invitations.list({ page, size, ...(invitationStatus.value ? { status: invitationStatus.value } : {}) })
    )
    if (result) invitations.value = { ...invitations.value, items: result.data, total: result.pagination.total_items }
  }

  async function loadOutbox(): Promise<void> {
    const { page, size } = outbox.value
    const result = await attempt('Loading the outbox', () => api().outbox.list({ page, size, ...(outboxStatus.value ? { status: outboxStatus.value } : {}) }))
    if (result) outbox.value = { ...outbox.value, items: result.data, total: result.pagination.total_items }
  }

  async function loadAll(): Promise<void> {
    loading.value = true
    await Promise.all([loadMembers(), loadInvitations(), loadOutbox()])
    loading.value = false
  }

  async function removeMember(member: TenantMember): Promise<void> {
    const done = await attempt('Removing the member', async () => (await api().members.delete(member.id), true))
    if (!done) return
    useNotificationsStore().notify('Member removed', `${member.user.email ?? member.user.id} no longer has access.`)
    await loadMembers()
  }

  async function invite(email: string): Promise<boolean> {
    const invitation = await attempt('Inviting', () => api().invitations.create({ email }))
    if (!invitation) return false
    useNotificationsStore().notify('Invitation created', `A mail to ${invitation.email} is in the outbox.`)
    await Promise.all([loadInvitations(), loadOutbox()])
    return true
  }

  async function resend(invitation: TenantInvitation): Promise<void> {
    const updated = await attempt('Resending the invitation', () => api().invitations.resend(invitation.id))
    if (!updated) return
    useNotificationsStore().notify('Invitation sent again', 'Earlier links no longer work.')
    await Promise.all([loadInvitations(), loadOutbox()])
  }

  async function removeInvitation(invitation: TenantInvitation): Promise<void> {
    const done = await attempt('Deleting the invitation', async () => (await api().invitations.delete(invitation.id), true))
    if (!done) return
    useNotificationsStore().notify('Invitation deleted', 'Its links no longer work.')
    await Promise.all([loadInvitations(), loadOutbox()])
  }

  return {
    members,
    invitations,
    invitationStatus,
    outbox,
    outboxStatus,
    loading,
    loadMembers,
    loadInvitations,
    loadOutbox,
    loadAll,
    removeMember,
    invite,
    resend,
    removeInvitation
  }
})
