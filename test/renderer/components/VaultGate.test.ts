import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { VaultStatus } from '@shared/ipc'
import { setApi } from '@renderer/api'
import VaultGate from '@renderer/components/VaultGate.vue'
import { useVaultStore } from '@renderer/stores/vault'
import { fakeApi } from '../fake-api'

const base: VaultStatus = { state: 'setup', dataDir: '/home/ada/.config/Tessera', keychainAvailable: true, service: { running: false }, version: '1.0.0' }

function mountGate(status: VaultStatus) {
  useVaultStore().status = status
  return mount(VaultGate, { attachTo: document.body })
}

describe('component VaultGate', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => {
    setApi(undefined)
    document.body.innerHTML = ''
  })

  it('offers the OS keychain on first run when one is available', () => {
    const wrapper = mountGate(base)
    expect(wrapper.find('[data-test="no-keychain"]').exists()).toBe(false)
    const radios = wrapper.findAll('input[type="radio"]')
    expect(radios[0].attributes('disabled')).toBeUndefined()
    expect((radios[0].element as HTMLInputElement).checked).toBe(true)
  })

  it('says so when there is no keychain and preselects the key file', () => {
    const wrapper = mountGate({ ...base, keychainAvailable: false })
    expect(wrapper.get('[data-test="no-keychain"]').text()).toContain('No OS keychain available')
    const radios = wrapper.findAll('input[type="radio"]')
    expect(radios[0].attributes('disabled')).toBeDefined()
    expect((radios[1].element as HTMLInputElement).checked).toBe(true)
  })

  it('creates the vault with the chosen tenant name and key storage', async () => {
    const create = vi.fn(async () => ({ status: { ...base, state: 'unlocked' as const }, application: { id: 'a', name: 'Tessera administration', key: 'key_management_x' } }))
    setApi(fakeApi({ vault: { create } }))
    const wrapper = mountGate({ ...base, keychainAvailable: false })
    await wrapper.get('[data-test="tenant-name"] input').setValue('Acme')
    await wrapper.get('form').trigger('submit')
    await flushPromises()
    expect(create).toHaveBeenCalledWith({ tenantName: 'Acme', keyStorage: 'key-file' })
    expect(useVaultStore().createdApplication?.key).toBe('key_management_x')
  })

  it('shows why a locked vault could not be opened', async () => {
    setApi(fakeApi({ settings: { get: vi.fn(async () => ({ port: 4390, idleLockMinutes: 15, auditRetentionDays: 0 })) } }))
    const wrapper = mountGate({ ...base, state: 'locked', keyStorage: 'keychain', error: 'Port 4390 is already in use; choose another port.' })
    await flushPromises()
    expect(wrapper.get('[data-test="vault-error"]').text()).toContain('Port 4390 is already in use')
    expect(wrapper.text()).toContain('the OS keychain')
  })
})
