import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { DesktopSettings, VaultStatus } from '@shared/ipc'
import { setApi } from '@renderer/api'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { useSettingsStore } from '@renderer/stores/settings'
import { useVaultStore } from '@renderer/stores/vault'
import { fakeApi, problem } from '../fake-api'

const saved: DesktopSettings = { port: 7450, idleLockMinutes: 15, auditRetentionDays: 0, publicBaseUrl: 'https://vault.example.com' }
const vaultStatus = (port: number): VaultStatus => ({ state: 'unlocked', dataDir: '/d', keychainAvailable: true, service: { running: true, url: `http://127.0.0.1:${port}` }, version: '1' })

describe('useSettingsStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => setApi(undefined))

  it('saves a change with its own toast, and reads the restarted service address', async () => {
    const update = vi.fn(async (patch: Partial<DesktopSettings>) => ({ ...saved, ...patch }) as DesktopSettings)
    setApi(fakeApi({ settings: { update }, vault: { status: vi.fn(async () => vaultStatus(8123)) } }))
    const store = useSettingsStore()
    expect(await store.save({ port: 8123 }, 'Service settings saved')).toBe(true)
    expect(store.settings?.port).toBe(8123)
    expect(store.saving).toBe(false)
    expect(useVaultStore().serviceUrl).toBe('http://127.0.0.1:8123')
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'success', title: 'Service settings saved' })])
  })

  it('shows the settings as saved again after a refused change, with the field named', async () => {
    const update = vi.fn(async () => Promise.reject(problem(400, 'The request has invalid fields.', { port: ['is in use'] })))
    setApi(fakeApi({ settings: { get: vi.fn(async () => saved), update }, vault: { status: vi.fn(async () => vaultStatus(7450)) } }))
    const store = useSettingsStore()
    expect(await store.save({ port: 80 })).toBe(false)
    expect(store.settings).toEqual(saved)
    expect(useVaultStore().serviceUrl).toBe('http://127.0.0.1:7450')
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'error', title: 'Saving settings failed', fields: ['port: is in use'] })])
  })
})
