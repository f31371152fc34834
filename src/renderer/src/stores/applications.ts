import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { CreateApplicationRequest, UpdateApplicationRequest } from '@shared/ipc'
import type { Application, ApplicationType } from '@shared/types'
import { api } from '@renderer/api'
import { useNotificationsStore } from './notifications'

export interface ShownKey {
  name: string
  key: string
  regenerated: boolean
}

/** Applications and their keys; a key is held only until its dialog is closed. */
export const useApplicationsStore = defineStore('applications', () => {
  const items = ref<Application[]>([])
  const total = ref(0)
  const page = ref(1)
  const size = ref(20)
  const types = ref<ApplicationType[]>([])
  const loading = ref(false)
  /** The key of a just-created or regenerated application, shown once. */
  const shownKey = ref<ShownKey>()

  async function load(): Promise<void> {
    loading.value = true
    try {
      const result = await api().applications.list({ page: page.value, size: size.value, ...(types.value.length ? { type: types.value } : {}) })
      items.value = result.data
      total.value = result.pagination.total_items
    } catch (error) {
      useNotificationsStore().reportError(error, 'Loading applications')
    } finally {
      loading.value = false
    }
  }

  /** Every application of one type (pickers on the Sessions view); at most 100. */
  async function listOfType(type: ApplicationType): Promise<Application[]> {
    try {
      return (await api().applications.list({ type: [type], size: 100 })).data
    } catch (error) {
      useNotificationsStore().reportError(error, 'Loading applications')
      return []
    }
  }

  async function create(body: CreateApplicationRequest): Promise<boolean> {
    try {
      const created = await api().applications.create(body)
      shownKey.value = { name: created.name, key: created.key ?? '', regenerated: false }
      await load()
      return true
    } catch (error) {
      useNotificationsStore().reportError(error, 'Creating the application')
      return false
    }
  }

  async function update(id: string, body: UpdateApplicationRequest): Promise<boolean> {
    try {
      await api().applications.update(id, body)
      useNotificationsStore().notify('Application saved')
      await load()
      return true
    } catch (error) {
      useNotificationsStore().reportError(error, 'Saving the application')
      return false
    }
  }

  async function regenerate(application: Application): Promise<void> {
    try {
      const updated = await api().applications.regenerate(application.id)
      shownKey.value = { name: updated.name, key: updated.key ?? '', regenerated: true }
    } catch (error) {
      useNotificationsStore().reportError(error, 'Regenerating the key')
    }
  }

  async function remove(application: Application): Promise<void> {
    try {
      await api().applications.delete(application.id)
      useNotificationsStore().notify('Application deleted', `${application.name} and its key no longer work.`)
      await load()
    } catch (error) {
      useNotificationsStore().reportError(error, 'Deleting the application')
    }
  }

  function dismissKey(): void {
    shownKey.value = undefined
  }

  return { items, total, page, size, types, loading, shownKey, load, listOfType, create, update, regenerate, remove, dismissKey }
})
