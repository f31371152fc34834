import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { DesktopSettings, SettingsPatch } from '@shared/ipc'
import { api } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'
import { useVaultStore } from './vault'

/** Desktop settings: service port, SMTP and the public base URL of invitation links. */
export const useSettingsStore = defineStore('settings', () => {
  const settings = ref<DesktopSettings>()
  const reading = useAction()
  const { busy: saving, run } = useAction()

  async function load(): Promise<void> {
    await reading.run('Loading settings', async () => {
      settings.value = await api().settings.get()
    })
  }

  /** Saves a change; the service restarts with it, so the vault state is read again, as are the settings after a failure. */
  async function save(patch: SettingsPatch, successMessage = 'Settings saved'): Promise<boolean> {
    const saved = await run(
      'Saving settings',
      async () => {
        settings.value = await api().settings.update(patch)
      },
      { success: () => ({ title: successMessage }) }
    )
    if (!saved) await load()
    await useVaultStore().refresh()
    return saved
  }

  return { settings, saving, load, save }
})
