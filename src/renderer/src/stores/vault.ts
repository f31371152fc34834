import { defineStore } from 'pinia'
import { computed, ref, watch } from 'vue'
import type { ConnectTeamRequest, CreateVaultRequest, VaultCreated, VaultStatus } from '@shared/ipc'
import { api } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'
import { useNotificationsStore } from './notifications'

/** The vault's state (setup, locked, unlocked), the service address, and first-run results. */
export const useVaultStore = defineStore('vault', () => {
  const status = ref<VaultStatus>()
  /** A create/unlock/lock call is running. */
  const { busy, run } = useAction()
  const reading = useAction()
  /** The management application made on first run; its key is shown once, then dropped. */
  const createdApplication = ref<VaultCreated['application']>()
  /** The vault was created or unlocked in this window (rather than found open): the shell then starts with focus on the view. */
  const unlockedHere = ref(false)

  const state = computed(() => status.value?.state)
  const unlocked = computed(() => status.value?.state === 'unlocked')
  const serviceUrl = computed(() => status.value?.service.url)
  /** The team vault the window is on, if it is not on the embedded one. */
  const team = computed(() => status.value?.team)
  const onTeam = computed(() => team.value !== undefined)

  async function refresh(): Promise<void> {
    await reading.run('Reading the vault state', async () => {
      status.value = await api().vault.status()
    })
  }

  // This store outlives a lock: a key still on show when the vault locks (idle, sleep, screen lock) goes with it.
  watch(unlocked, (isUnlocked) => {
    if (!isUnlocked) forgetCreatedApplication()
  })

  // Any call that finds the vault locked (another action, a failed restart) brings the unlock screen back.
  useNotificationsStore().onVaultLocked(() => void refresh())

  /** Runs a call that returns the new state; after a failure the state is read again. */
  async function change(action: string, work: () => Promise<VaultStatus>): Promise<boolean> {
    const done = await run(action, async () => {
      status.value = await work()
      unlockedHere.value = status.value.state === 'unlocked'
    })
    if (!done) await refresh()
    return done
  }

  function create(request: CreateVaultRequest): Promise<boolean> {
    return change('Creating the vault', async () => {
      const created = await api().vault.create(request)
      createdApplication.value = created.application
      return created.status
    })
  }

  const unlock = () => change('Unlocking the vault', () => api().vault.unlock())
  const lock = () => change('Locking the vault', () => api().vault.lock())

  /** Moves the window onto a team vault; the key is not kept here once sent. */
  const connect = (request: ConnectTeamRequest) =>
    change('Connecting to the team vault', async () => {
      await api().connection.connect(request)
      return api().vault.status()
    })

  /** Back onto the embedded vault. */
  const disconnect = () =>
    change('Disconnecting from the team vault', async () => {
      await api().connection.disconnect()
      return api().vault.status()
    })

  /** When the idle lock will lock the vault if nobody touches the computer (ISO 8601), while unlocked. */
  const idleLockAt = computed(() => status.value?.idleLock?.lockAt)

  /**
   * Reads the state without a toast on failure (the next poll tries again):
   * the idle lock's time moves with the user's activity, and the main process
   * may lock the vault at any moment (idle, sleep, screen lock).
   */
  let polling = false
  async function poll(): Promise<void> {
    if (polling) return
    polling = true
    try {
      status.value = await api().vault.status()
    } catch {
      // A poll that fails leaves the state as it was.
    } finally {
      polling = false
    }
  }

  /** Tells the idle lock that the user is here, and shows the later lock time. */
  function stayUnlocked(): Promise<boolean> {
    return reading.run('Keeping the vault unlocked', async () => {
      status.value = await api().vault.reportActivity()
    })
  }

  function forgetCreatedApplication(): void {
    createdApplication.value = undefined
  }

  return {
    status,
    busy,
    createdApplication,
    unlockedHere,
    state,
    unlocked,
    serviceUrl,
    team,
    onTeam,
    refresh,
    create,
    unlock,
    lock,
    connect,
    disconnect,
    idleLockAt,
    poll,
    stayUnlocked,
    forgetCreatedApplication
  }
})
