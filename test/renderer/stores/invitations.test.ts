import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { InvitationListQuery, OutboxListQuery, OutboxMail } from '@shared/ipc'
import type { TenantInvitation } from '@shared/types'
import { setApi } from '@renderer/api'
import { useInvitationsStore } from '@renderer/stores/invitations'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { useOutboxStore } from '@renderer/stores/outbox'
import { fakeApi, pageOf, problem } from '../fake-api'

const invitation = (id: string, email = 'grace@example.com'): TenantInvitation => ({ id, tenant_id: 't', email, status: 'PENDING', expires_at: '2026-11-28T10:00:00.000Z' })
const mail = (id: string): OutboxMail => ({ id, recipient: 'grace@example.com', subject: 'Join', status: 'PENDING', attempts: 0, created_at: '2026-11-25T10:00:00.000Z' })

describe('useInvitationsStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => setApi(undefined))

  function fakeLists() {
    const invitations = vi.fn(async (_query: InvitationListQuery) => pageOf([invitation('i1')], 30))
    const outbox = vi.fn(async (_query: OutboxListQuery) => pageOf([mail('o1')]))
    return { invitations, outbox }
  }

  it('filters by status from the first page, and sends no status for "any"', async () => {
    const { invitations } = fakeLists()
    setApi(fakeApi({ invitations: { list: invitations } }))
    const store = useInvitationsStore()
    await store.setPage(2)
    await store.setFilters({ status: 'EXPIRED' })
    expect(invitations).toHaveBeenLastCalledWith({ page: 1, size: 20, status: 'EXPIRED' })
    await store.setFilters({ status: null })
    expect(invitations).toHaveBeenLastCalledWith({ page: 1, size: 20 })
  })

  it('invites, resends and deletes, each with its toast, reading the invitations and the outbox again', async () => {
    const { invitations, outbox } = fakeLists()
    setApi(
      fakeApi({
        invitations: {
          list: invitations,
          create: vi.fn(async ({ email }: { email: string }) => invitation('i2', email)),
          resend: vi.fn(async (id: string) => invitation(id)),
          delete: vi.fn(async () => undefined)
        },
        outbox: { list: outbox }
      })
    )
    const store = useInvitationsStore()
    expect(await store.invite('ada@example.com')).toBe(true)
    expect(await store.resend(invitation('i1'))).toBe(true)
    expect(await store.remove(invitation('i1'))).toBe(true)
    expect(useNotificationsStore().queue.map((notice) => [notice.title, notice.detail])).toEqual([
      ['Invitation created', 'A mail to ada@example.com is in the outbox.'],
      ['Invitation sent again', 'Earlier links no longer work.'],
      ['Invitation deleted', 'Its links no longer work.']
    ])
    expect([invitations.mock.calls.length, outbox.mock.calls.length]).toEqual([3, 3])
    expect(useOutboxStore().items).toEqual([mail('o1')])
  })

  it('names the bad address of a refused invitation and reads nothing again', async () => {
    const { invitations, outbox } = fakeLists()
    const create = vi.fn(async () => Promise.reject(problem(400, 'The request has invalid fields.', { email: ['must be an e-mail address'] })))
    setApi(fakeApi({ invitations: { list: invitations, create }, outbox: { list: outbox } }))
    expect(await useInvitationsStore().invite('not-an-address')).toBe(false)
    expect(invitations).not.toHaveBeenCalled()
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ title: 'Inviting failed', fields: ['email: must be an e-mail address'] })])
  })
})
