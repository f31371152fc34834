import { defineStore } from 'pinia'
import { computed, onScopeDispose, ref } from 'vue'
import type { DataKeyVersion, KeyRetirementReport, KeyStatus, SealedObjectCounts } from '@shared/types'
import { api } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'

/** How often the status is read again while a rotation re-encrypts. */
export const KEY_STATUS_POLL_MS = 1_000

const KIND_LABELS: Record<keyof SealedObjectCounts, [string, string]> = {
  tokens: ['token', 'tokens'],
  outbox_mails: ['outbox mail', 'outbox mails'],
  sealed_settings: ['sealed setting', 'sealed settings'],
  token_intents: ['token intent', 'token intents'],
  idempotent_responses: ['stored idempotent response', 'stored idempotent responses']
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
  const reading = useAction()
  const rotatingData = useAction()
  const retiring = useAction()
  const rotatingMaster = useAction()
  /** The ceremony running, for its button's spinner. */
  const busy = computed(() =>
    rotatingData.busy.value ? 'rotate' : retiring.busy.value ? 'retire' : rotatingMaster.busy.value ? 'rotate-master' : undefined
  )
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

  // Disposed when the vault locks (vaultData.ts): a locked vault is not asked for its keys.
  onScopeDispose(stopPolling)

  function pollWhileRotating(): void {
    stopPolling()
    if (rotating.value) pollTimer = setTimeout(() => void load(), KEY_STATUS_POLL_MS)
  }

  async function load(): Promise<void> {
    await reading.run('Loading the key status', async () => {
      status.value = await api().keys.status()
    })
    pollWhileRotating()
  }

  /** Starts a rotation: new writes use the new version at once; progress follows until the pass is done. */
  async function rotate(): Promise<boolean> {
    const done = await rotatingData.run(
      'Rotating the data key',
      async () => {
        status.value = await api().keys.rotate()
      },
      {
        success: () => ({
          title: `Data key version ${tenant.value?.current_version} created`,
          detail: 'New data is sealed with it; everything else is re-encrypted in the background.'
        })
      }
    )
    if (done) pollWhileRotating()
    return done
  }

  /** Retires a version nothing uses any more and shows its report. */
  function retire(version: number): Promise<boolean> {
    return retiring.run(
      `Retiring data key version ${version}`,
      async () => {
        report.value = await api().keys.retire(version)
      },
      { success: () => ({ title: `Data key version ${version} retired`, detail: 'Its key is deleted. Keep the report as proof.' }), after: load }
    )
  }

  async function showReport(version: number): Promise<void> {
    await retiring.run('Loading the report', async () => {
      report.value = await api().keys.report(version)
    })
  }

  function rotateMaster(): Promise<boolean> {
    return rotatingMaster.run('Rotating the master key', () => api().keys.rotateMaster(), {
      success: (rotated) => ({
        title: 'Master key rotated',
        detail: `New key check value ${rotated.key_check_value}. Back up the new key and destroy copies of the old one.`
      })
    })
  }

  return { status, busy, report, tenant, rotation, rotating, progress, retirable, load, rotate, retire, showReport, rotateMaster, stopPolling }
})
