import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import type { DataKeyVersion, KeyRetirementReport, KeyStatus, SealedObjectCounts } from '@shared/types'
import { api } from '@renderer/api'
import { useNotificationsStore } from './notifications'

/** How often the status is read again while a rotation re-encrypts. */
export const KEY_STATUS_POLL_MS = 1_000

const KIND_LABELS: Record<keyof SealedObjectCounts, [string, string]> = {
  tokens: ['token', 'tokens'],
  outbox_mails: ['outbox mail', 'outbox mails'],
  sealed_settings: ['sealed setting', 'sealed settings']
}

/** "3 tokens, 1 outbox mail", or "nothing". */
export function describeObjects(objects: SealedObjectCounts): string {
  const parts = (Object.keys(KIND_LABELS) as (keyof SealedObjectCounts)[])
    .filter((kind) => objects[kind] > 0)
    .map((kind) => `${objects[kind]} ${KIND_LABELS[kind][objects[kind] === 1 ? 0 : 1]}`)
  return parts.length ? parts.join(', ') : 'nothing'
}

/** Nothing sealed under it: a version that may be retired once it is not the current one. */
function sealsNothing(version: DataKeyVersion): boolean {
  return Object.values(version.objects).every((count) => count === 0)
}

/**
 * Key ceremonies in Settings: the data-key versions of the vault's tenant, a
 * rotation's progress (read again every second while it re-encrypts),
 * retirement with its report, and master-key rotation.
 */
export const useKeysStore = defineStore('keys', () => {
  const status = ref<KeyStatus>()
  const busy = ref<'rotate' | 'retire' | 'rotate-master' | undefined>()
  /** The retirement report on screen. */
  const report = ref<KeyRetirementReport>()
  let pollTimer: ReturnType<typeof setTimeout> | undefined

  const tenant = computed(() => status.value?.tenants[0])
  const rotation = computed(() => tenant.value?.rotation)
  const rotating = computed(() => rotation.value !== undefined && rotation.value.finished_at === undefined)
  /** Percent of the running (or last) rotation's objects re-encrypted. */
  const progress = computed(() => {
    const current = rotation.value
    if (!current || current.total === 0) return 100
    return Math.floor((100 * Math.max(0, current.total - current.remaining)) / current.total)
  })
  const retirable = computed(() => new Set(tenant.value?.versions.filter((version) => !version.current && !version.retired_at && sealsNothing(version)).map((version) => version.version)))

  function stopPolling(): void {
    if (pollTimer) clearTimeout(pollTimer)
    pollTimer = undefined
  }

  function pollWhileRotating(): void {
    stopPolling()
    if (rotating.value) pollTimer = setTimeout(() => void load(), KEY_STATUS_POLL_MS)
  }

  async function load(): Promise<void> {
    try {
      status.value = await api().keys.status()
    } catch (error) {
      useNotificationsStore().reportError(error, 'Loading the key status')
    }
    pollWhileRotating()
  }

  async function run<T>(kind: NonNullable<typeof busy.value>, action: string, work: () => Promise<T>): Promise<T | undefined> {
    busy.value = kind
    try {
      return await work()
    } catch (error) {
      useNotificationsStore().reportError(error, action)
      return undefined
    } finally {
      busy.value = undefined
    }
  }

  /** Starts a rotation: new writes use the new version at once; progress follows until the pass is done. */
  async function rotate(): Promise<boolean> {
    const next = await run('rotate', 'Rotating the data key', () => api().keys.rotate())
    if (!next) return false
    status.value = next
    const version = next.tenants[0]?.current_version
    useNotificationsStore().notify(`Data key version ${version} created`, 'New data is sealed with it; everything else is re-encrypted in the background.')
    pollWhileRotating()
    return true
  }

  /** Retires a version nothing uses any more and shows its report. */
  async function retire(version: number): Promise<boolean> {
    const retired = await run('retire', `Retiring data key version ${version}`, () => api().keys.retire(version))
    if (!retired) return false
    report.value = retired
    useNotificationsStore().notify(`Data key version ${version} retired`, 'Its key is deleted. Keep the report as proof.')
    await load()
    return true
  }

  async function showReport(version: number): Promise<void> {
    const found = await run('retire', 'Loading the report', () => api().keys.report(version))
    if (found) report.value = found
  }

  async function rotateMaster(): Promise<boolean> {
    const rotated = await run('rotate-master', 'Rotating the master key', () => api().keys.rotateMaster())
    if (!rotated) return false
    useNotificationsStore().notify('Master key rotated', `New key check value ${rotated.key_check_value}. Back up the new key and destroy copies of the old one.`)
    return true
  }

  return { status, busy, report, tenant, rotation, rotating, progress, retirable, load, rotate, retire, showReport, rotateMaster, stopPolling }
})
