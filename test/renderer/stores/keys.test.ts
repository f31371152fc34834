import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { DataKeyVersion, KeyRetirementReport, KeyStatus, KeyRotationProgress } from '@shared/types'
import { setApi } from '@renderer/api'
import { describeObjects, KEY_STATUS_POLL_MS, useKeysStore } from '@renderer/stores/keys'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { fakeApi, problem } from '../fake-api'

const none = { tokens: 0, outbox_mails: 0, sealed_settings: 0, token_intents: 0, idempotent_responses: 0 }
const version = (number: number, extra: Partial<DataKeyVersion> = {}): DataKeyVersion => ({
  version: number,
  current: false,
  key_check_value: `kcv${number}`,
  created_at: '2026-11-25T12:00:00.000Z',
  objects: none,
  ...extra
})
const status = (versions: DataKeyVersion[], rotation?: KeyRotationProgress): KeyStatus => ({
  tenants: [{ tenant_id: 't', current_version: versions.find((entry) => entry.current)!.version, versions, ...(rotation ? { rotation } : {}) }]
})
const rotation = (remaining: number, finished = false): KeyRotationProgress => ({
  target_version: 2,
  started_at: '2026-11-25T12:00:00.000Z',
  total: 200,
  remaining,
  ...(finished ? { finished_at: '2026-11-25T12:01:00.000Z' } : {})
})

describe('useKeysStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => {
    setApi(undefined)
    vi.useRealTimers()
  })

  it('starts a rotation and follows its progress until the pass has finished, then stops asking', async () => {
    vi.useFakeTimers()
    const started = status([version(1, { objects: { ...none, tokens: 200 } }), version(2, { current: true })], rotation(200))
    const halfway = status([version(1, { objects: { ...none, tokens: 100 } }), version(2, { current: true, objects: { ...none, tokens: 100 } })], rotation(100))
    const done = status([version(1), version(2, { current: true, objects: { ...none, tokens: 200 } })], rotation(0, true))
    const statusCall = vi.fn().mockResolvedValueOnce(halfway).mockResolvedValueOnce(done)
    setApi(fakeApi({ keys: { rotate: vi.fn(async () => started), status: statusCall } }))
    const store = useKeysStore()

    expect(await store.rotate()).toBe(true)
    expect(store.rotating).toBe(true)
    expect(store.progress).toBe(0)
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'success', title: 'Data key version 2 created' })])

    await vi.advanceTimersByTimeAsync(KEY_STATUS_POLL_MS)
    expect(store.progress).toBe(50)
    expect(store.retirable.size).toBe(0)
    await vi.advanceTimersByTimeAsync(KEY_STATUS_POLL_MS)
    expect(store.rotating).toBe(false)
    expect(store.progress).toBe(100)
    expect([...store.retirable]).toEqual([1])
    await vi.advanceTimersByTimeAsync(10 * KEY_STATUS_POLL_MS)
    expect(statusCall).toHaveBeenCalledTimes(2)
  })

  it('retires a version and shows its report, then reads the status again', async () => {
    const report = { report: 'tessera-data-key-retirement', retired_version: 1 } as KeyRetirementReport
    const retire = vi.fn(async () => report)
    const after = status([version(1, { retired_at: '2026-11-25T13:00:00.000Z' }), version(2, { current: true })])
    setApi(fakeApi({ keys: { retire, status: vi.fn(async () => after) } }))
    const store = useKeysStore()
    expect(await store.retire(1)).toBe(true)
    expect(retire).toHaveBeenCalledWith(1)
    expect(store.report).toEqual(report)
    expect(store.tenant?.versions[0].retired_at).toBeDefined()
    expect(store.retirable.size).toBe(0)
    expect(store.busy).toBeUndefined()
  })

  it('shows why a retirement was refused and keeps no report', async () => {
    const detail = 'Data key version 1 still seals 12 tokens; wait until the re-encryption has moved them (see the key status), then retire it.'
    setApi(fakeApi({ keys: { retire: vi.fn(async () => Promise.reject(problem(409, detail))) } }))
    const store = useKeysStore()
    expect(await store.retire(1)).toBe(false)
    expect(store.report).toBeUndefined()
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'error', title: 'Retiring data key version 1 failed', detail })])
  })

  it('rotates the master key and names the new key check value', async () => {
    setApi(fakeApi({ keys: { rotateMaster: vi.fn(async () => ({ rotated_at: '2026-11-25T12:00:00.000Z', key_check_value: '0123456789abcdef' })) } }))
    const store = useKeysStore()
    expect(await store.rotateMaster()).toBe(true)
    expect(useNotificationsStore().queue[0]).toMatchObject({ title: 'Master key rotated', detail: expect.stringContaining('0123456789abcdef') })
  })

  it('describes what a version seals in words', () => {
    expect(describeObjects(none)).toBe('nothing')
    expect(describeObjects({ tokens: 1, outbox_mails: 2, sealed_settings: 0, token_intents: 0, idempotent_responses: 0 })).toBe('1 token, 2 outbox mails')
  })
})
