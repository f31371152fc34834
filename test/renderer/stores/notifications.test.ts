import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ProblemError, setApi } from '@renderer/api'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { useVaultStore } from '@renderer/stores/vault'
import { fakeApi } from '../fake-api'

describe('useNotificationsStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => setApi(undefined))

  it('queues toasts until they are drained', () => {
    const store = useNotificationsStore()
    store.notify('Token created', 'tok_1')
    store.reportError(new Error('boom'), 'Loading tokens')
    expect(store.drain().map((notice) => [notice.kind, notice.title])).toEqual([
      ['success', 'Token created'],
      ['error', 'Loading tokens failed']
    ])
    expect(store.queue).toEqual([])
  })

  it('reads the vault state again when a call finds the vault locked, so the unlock screen shows', async () => {
    const status = vi.fn(async () => ({ state: 'locked' as const, dataDir: '/d', keychainAvailable: true, service: { running: false }, version: '1' }))
    setApi(fakeApi({ vault: { status } }))
    useNotificationsStore().reportError(new ProblemError({ type: 'about:blank', title: 'Service Unavailable', status: 503, code: 'vault_locked', detail: 'The vault is locked.' }))
    await vi.waitFor(() => expect(useVaultStore().state).toBe('locked'))
    expect(status).toHaveBeenCalledTimes(1)
  })
})
