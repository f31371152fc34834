import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { CreateApplicationRequest, UpdateApplicationRequest } from '@shared/ipc'
import type { Application, ApplicationType } from '@shared/types'
import { api } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'
import { usePagedList } from '@renderer/composables/usePagedList'

export interface ShownKey {
  name: string
  key: string
  regenerated: boolean
}

export interface ApplicationFilters {
  types: ApplicationType[]
}

/** Applications and their keys; a key is held only until its dialog is closed. */
export const useApplicationsStore = defineStore('applications', () => {
  const list = usePagedList<Application, ApplicationFilters>({
    name: 'Loading applications',
    noun: ['application', 'applications'],
    filters: () => ({ types: [] }),
    fetch: (paging, { types }) => api().applications.list({ ...paging, ...(types.length ? { type: types } : {}) })
  })
  const { run } = useAction()
  /** The key of a just-created or regenerated application, shown once. */
  const shownKey = ref<ShownKey>()

  function showKey(application: Application, regenerated: boolean): void {
    shownKey.value = { name: application.name, key: application.key ?? '', regenerated }
  }

  /** Every application of one type (pickers on the Sessions view); at most 100. */
  async function listOfType(type: ApplicationType): Promise<Application[]> {
    let found: Application[] = []
    await run('Loading applications', async () => {
      found = (await api().applications.list({ type: [type], size: 100 })).data
    })
    return found
  }

  function create(body: CreateApplicationRequest): Promise<boolean> {
    return run('Creating the application', async () => showKey(await api().applications.create(body), false), { after: list.load })
  }

  function update(id: string, body: UpdateApplicationRequest): Promise<boolean> {
    return run('Saving the application', () => api().applications.update(id, body), { success: () => ({ title: 'Application saved' }), after: list.load })
  }

  function regenerate(application: Application): Promise<boolean> {
    return run('Regenerating the key', async () => showKey(await api().applications.regenerate(application.id), true))
  }

  function remove(application: Application): Promise<boolean> {
    return run('Deleting the application', () => api().applications.delete(application.id), {
      success: () => ({ title: 'Application deleted', detail: `${application.name} and its keys no longer work.` }),
      after: list.load
    })
  }

  function dismissKey(): void {
    shownKey.value = undefined
  }

  return { ...list, shownKey, listOfType, create, update, regenerate, remove, dismissKey }
})
