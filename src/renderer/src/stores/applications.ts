import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { CreateApplicationRequest, UpdateApplicationRequest } from '@shared/ipc'
import type { Application, ApplicationKey, ApplicationType } from '@shared/types'
import { api } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'
import { usePagedList } from '@renderer/composables/usePagedList'

export interface ShownKey {
  name: string
  key: string
  regenerated: boolean
  /** A key added beside the others (rotation with overlap). */
  added?: boolean
}

/** The application whose keys are open, with its keys (never their values). */
export interface OpenKeys {
  application: Application
  keys: ApplicationKey[]
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
  const openKeys = ref<OpenKeys>()

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

  /** Creates an application and shows its key; `created` runs once it exists, before the list is read again. */
  function create(body: CreateApplicationRequest, created?: () => void): Promise<boolean> {
    return run(
      'Creating the application',
      async () => {
        showKey(await api().applications.create(body), false)
        created?.()
      },
      { after: list.load }
    )
  }

  /** Saves an application; `saved` runs once it is saved, before the list is read again. */
  function update(id: string, body: UpdateApplicationRequest, saved?: () => void): Promise<boolean> {
    return run(
      'Saving the application',
      async () => {
        await api().applications.update(id, body)
        saved?.()
      },
      { success: () => ({ title: 'Application saved' }), after: list.load }
    )
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

  async function loadKeys(application: Application): Promise<void> {
    const keys = await api().applications.listKeys(application.id)
    openKeys.value = { application, keys }
  }

  /** Opens the keys of `application`. */
  function showKeys(application: Application): Promise<boolean> {
    return run('Loading the keys', () => loadKeys(application))
  }

  function closeKeys(): void {
    openKeys.value = undefined
  }

  /** Adds a key to the open application (shown once); its other keys keep working. */
  function addKey(): Promise<boolean> {
    const application = openKeys.value?.application
    if (!application) return Promise.resolve(false)
    return run('Adding a key', async () => {
      const added = await api().applications.createKey(application.id)
      shownKey.value = { name: application.name, key: added.key ?? '', regenerated: false, added: true }
      await loadKeys(application)
    })
  }

  /** Deletes one key of the open application: it stops working at once. */
  function deleteKey(key: ApplicationKey): Promise<boolean> {
    const application = openKeys.value?.application
    if (!application) return Promise.resolve(false)
    return run('Deleting the key', () => api().applications.deleteKey(application.id, key.id), {
      success: () => ({ title: 'Key deleted', detail: `That key of ${application.name} no longer works.` }),
      after: () => loadKeys(application)
    })
  }

  return { ...list, shownKey, openKeys, listOfType, create, update, regenerate, remove, dismissKey, showKeys, closeKeys, addKey, deleteKey }
})
