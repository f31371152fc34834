import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { DesktopSettings, SettingsPatch } from '@shared/ipc'
import { api } from '@renderer/api'
import { useNotificationsStore } from './notifications'
import { useVaultStore } from './vault'

/** Desktop settings: service port, SMTP and the public base URL of invitation links. */
export const useSettingsStore = defineStore('settings', () => {
  const settings = ref<DesktopSettings>()
  const saving = ref(false)

  async function load(): Promise<void> {
    try {
      settings.value = await api().settings.get()
    } catch (error) {
      useNotificationsStore().reportError(error, 'Loading settings')
    }
  }

  /** Saves a change; the service restarts with it, so the vault state is read again. */
  async function save(patch: SettingsPatch, successMessage = 'Settings saved'): Promise<boolean> {
    saving.value = true
    try {
      settings.value = await api().settings.update(patch)
      useNotificationsStore().notify(successMessage)
      return true
    } catch (error) {
      useNotificationsStore().reportError(error, 'Saving settings')
      await load()
      return false
    } finally {
      saving.value = false
      await useVaultStore().refresh()
    }
  }

  return { settings, saving, load, save }
})
