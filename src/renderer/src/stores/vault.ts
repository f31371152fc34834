import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import type { CreateVaultRequest, VaultCreated, VaultStatus } from '@shared/ipc'
import { api } from '@renderer/api'
import { useNotificationsStore } from './notifications'

/** The vault's state (setup, locked, unlocked), the service address, and first-run results. */
export const useVaultStore = defineStore('vault', () => {
  const status = ref<VaultStatus>()
  /** A create/unlock/lock call is running. */
  const busy = ref(false)
  /** The management application made on first run; its key is shown once, then dropped. */
  const createdApplication = ref<VaultCreated['application']>()

  const state = computed(() => status.value?.state)
  const unlocked = computed(() => status.value?.state === 'unlocked')
  const serviceUrl = computed(() => status.value?.service.url)

  async function run(action: string, work: () => Promise<VaultStatus>): Promise<boolean> {
    busy.value = true
    try {
      status.value = await work()
      return true
    } catch (error) {
      useNotificationsStore().reportError(error, action)
      await refresh()
      return false
    } finally {
      busy.value = false
    }
  }

  async function refresh(): Promise<void> {
    try {
      status.value = await api().vault.status()
    } catch (error) {
      useNotificationsStore().reportError(error, 'Reading the vault state')
    }
  }

  function create(request: CreateVaultRequest): Promise<boolean> {
    return run('Creating the vault', async () => {
      const created = await api().vault.create(request)
      createdApplication.value = created.application
      return created.status
    })
  }

  const unlock = () => run('Unlocking the vault', () => api().vault.unlock())
  const lock = () => run('Locking the vault', () => api().vault.lock())

  function forgetCreatedApplication(): void {
    createdApplication.value = undefined
  }

  return { status, busy, createdApplication, state, unlocked, serviceUrl, refresh, create, unlock, lock, forgetCreatedApplication }
})
