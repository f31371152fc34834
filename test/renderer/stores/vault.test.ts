import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nextTick } from 'vue'
import type { VaultStatus } from '@shared/ipc'
import { ProblemError, setApi } from '@renderer/api'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { useTokensStore } from '@renderer/stores/tokens'
import { useVaultStore } from '@renderer/stores/vault'
import { fakeApi, problem } from '../fake-api'

const status = (state: VaultStatus['state']): VaultStatus => ({
  state,
  dataDir: '/data',
  keychainAvailable: true,
  service: state === 'unlocked' ? { running: true, url: 'http://127.0.0.1:7450' } : { running: false },
  version: '1'
})

describe('useVaultStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => setApi(undefined))

  it('reads the state and the service address', async () => {
    setApi(fakeApi({ vault: { status: vi.fn(async () => status('unlocked')) } }))
    const vault = useVaultStore()
    await vault.refresh()
    expect([vault.state, vault.unlocked, vault.serviceUrl]).toEqual(['unlocked', true, 'http://127.0.0.1:7450'])
  })

  it('is busy while it unlocks, then shows the open vault', async () => {
    let open!: (value: VaultStatus) => void
    setApi(fakeApi({ vault: { unlock: vi.fn(() => new Promise<VaultStatus>((resolve) => (open = resolve))) } }))
    const vault = useVaultStore()
    const unlocking = vault.unlock()
    expect(vault.busy).toBe(true)
    open(status('unlocked'))
    expect(await unlocking).toBe(true)
    expect([vault.busy, vault.unlocked]).toEqual([false, true])
  })

  it('drops the first-run management key when the vault locks before it is dismissed', async () => {
    const application = { id: 'app_1', name: 'Management', key: 'key_management_secret' }
    const read = vi.fn(async () => status('locked'))
    setApi(fakeApi({ vault: { create: vi.fn(async () => ({ status: status('unlocked'), application })), status: read } }))
    const vault = useVaultStore()
    expect(await vault.create({ tenantName: 'Acme', ownerEmail: 'o@example.com', keyStorage: 'key-file' })).toBe(true)
    expect(vault.createdApplication?.key).toBe('key_management_secret')
    await vault.poll()
    await nextTick()
    expect(vault.createdApplication).toBeUndefined()
  })

  it('shows why unlocking failed and reads the state again', async () => {
    const read = vi.fn(async () => ({ ...status('locked'), error: 'The master key does not open this vault.' }))
    setApi(fakeApi({ vault: { unlock: vi.fn(async () => Promise.reject(problem(500, 'The vault could not be opened.'))), status: read } }))
    const vault = useVaultStore()
    expect(await vault.unlock()).toBe(false)
    expect(read).toHaveBeenCalledTimes(1)
    expect(vault.status?.error).toBe('The master key does not open this vault.')
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'error', title: 'Unlocking the vault failed' })])
  })

  it('connects to a team vault and back, reading the state after each', async () => {
    const team = { kind: 'team' as const, url: 'https://vault.example.com', host: 'vault.example.com', tenantName: 'Acme', remembered: true }
    const read = vi.fn(async () => ({ ...status('unlocked'), team }))
    const connect = vi.fn(async () => team)
    setApi(fakeApi({ vault: { status: read }, connection: { connect, disconnect: vi.fn(async () => ({ kind: 'embedded' as const })) } }))
    const vault = useVaultStore()
    expect(await vault.connect({ url: 'https://vault.example.com', key: 'key_management_secret' })).toBe(true)
    expect(connect).toHaveBeenCalledWith({ url: 'https://vault.example.com', key: 'key_management_secret' })
    expect([vault.onTeam, vault.team?.host]).toEqual([true, 'vault.example.com'])
    read.mockResolvedValueOnce(status('locked') as never)
    expect(await vault.disconnect()).toBe(true)
    expect([vault.onTeam, vault.state]).toEqual([false, 'locked'])
  })

  it('holds the first-run application key until it is dismissed', async () => {
    const application = { id: 'a', name: 'Management', key: 'key_management_secret' }
    setApi(fakeApi({ vault: { create: vi.fn(async () => ({ status: status('unlocked'), application })) } }))
    const vault = useVaultStore()
    expect(await vault.create({ tenantName: 'Acme', keyStorage: 'key-file' })).toBe(true)
    expect([vault.unlocked, vault.createdApplication]).toEqual([true, application])
    vault.forgetCreatedApplication()
    expect(vault.createdApplication).toBeUndefined()
  })

  it('shows the unlock screen when any action finds the vault locked behind its back', async () => {
    const read = vi.fn(async () => status('locked'))
    const lockedProblem = new ProblemError({ type: 'about:blank', title: 'Service Unavailable', status: 503, code: 'vault_locked', detail: 'The vault is locked.' })
    setApi(fakeApi({ vault: { status: read }, tokens: { list: vi.fn(async () => Promise.reject(lockedProblem)) } }))
    // As in the window: the vault store exists from the start (App.vue), before any view acts.
    const vault = useVaultStore()
    await useTokensStore().load()
    await vi.waitFor(() => expect(vault.state).toBe('locked'))
    expect(read).toHaveBeenCalledTimes(1)
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ title: 'Loading tokens failed', detail: 'The vault is locked.' })])
  })
})
