import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { TenantMember } from '@shared/types'
import { setApi } from '@renderer/api'
import { useMembersStore } from '@renderer/stores/members'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { fakeApi, pageOf, problem } from '../fake-api'

const member = (id: string, email?: string): TenantMember => ({ id, tenant_id: 't', role: 'ADMIN', user: { id: `u-${id}`, ...(email ? { email } : {}) } })

describe('useMembersStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => setApi(undefined))

  it('pages the members with a page-size picker like every other table', async () => {
    const list = vi.fn(async () => pageOf([member('m1')], 75))
    setApi(fakeApi({ members: { list } }))
    const store = useMembersStore()
    await store.setSize(50)
    expect(list).toHaveBeenLastCalledWith({ page: 1, size: 50 })
    expect(store.pagination).toMatchObject({ showSizePicker: true, pageSize: 50, itemCount: 75 })
    expect(store.pagination.prefix()).toBe('75 members')
  })

  it('removes a member, says who lost access and lists again', async () => {
    const list = vi.fn(async () => pageOf<TenantMember>([]))
    const remove = vi.fn(async () => undefined)
    setApi(fakeApi({ members: { list, delete: remove } }))
    const store = useMembersStore()
    expect(await store.remove(member('m1', 'ada@example.com'))).toBe(true)
    expect(remove).toHaveBeenCalledWith('m1')
    expect(list).toHaveBeenCalledTimes(1)
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ title: 'Member removed', detail: 'ada@example.com no longer has access.' })])
  })

  it('keeps the list as it is when the removal is refused', async () => {
    const list = vi.fn()
    setApi(fakeApi({ members: { list, delete: vi.fn(async () => Promise.reject(problem(409, 'The OWNER cannot be removed.'))) } }))
    expect(await useMembersStore().remove(member('owner'))).toBe(false)
    expect(list).not.toHaveBeenCalled()
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'error', title: 'Removing the member failed', detail: 'The OWNER cannot be removed.' })])
  })
})
