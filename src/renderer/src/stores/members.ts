import { defineStore } from 'pinia'
import type { TenantMember } from '@shared/types'
import { api } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'
import { usePagedList } from '@renderer/composables/usePagedList'

/** The people who administer the tenant. */
export const useMembersStore = defineStore('members', () => {
  const list = usePagedList<TenantMember>({
    name: 'Loading members',
    noun: ['member', 'members'],
    fetch: (paging) => api().members.list(paging)
  })
  const { run } = useAction()

  function remove(member: TenantMember): Promise<boolean> {
    return run('Removing the member', () => api().members.delete(member.id), {
      success: () => ({ title: 'Member removed', detail: `${member.user.email ?? member.user.id} no longer has access.` }),
      after: list.load
    })
  }

  return { ...list, remove }
})
