import { mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { VaultStatus } from '@shared/ipc'
import { setApi } from '@renderer/api'
import IdleLockWarning from '@renderer/components/IdleLockWarning.vue'
import { useVaultStore } from '@renderer/stores/vault'
import { fakeApi } from '../fake-api'

const NOW = Date.parse('2026-11-25T12:00:00.000Z')

function unlocked(lockInMs: number): VaultStatus {
  return {
    state: 'unlocked',
    dataDir: '/data',
    keychainAvailable: true,
    service: { running: true, url: 'http://127.0.0.1:7450' },
    version: '1',
    idleLock: { minutes: 15, lockAt: new Date(Date.now() + lockInMs).toISOString() }
  }
}
const locked: VaultStatus = { state: 'locked', dataDir: '/data', keychainAvailable: true, service: { running: false }, version: '1' }

describe('component IdleLockWarning', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: NOW })
    setActivePinia(createPinia())
  })
  afterEach(() => {
    vi.useRealTimers()
    setApi(undefined)
    document.body.innerHTML = ''
  })

  const reportActivity = vi.fn(async () => unlocked(15 * 60_000))

  async function mountWith(status: () => Promise<VaultStatus>) {
    setApi(fakeApi({ vault: { status, reportActivity } }))
    const vault = useVaultStore()
    await vault.refresh()
    return { vault, wrapper: mount(IdleLockWarning, { attachTo: document.body }) }
  }

  it('stays hidden while the lock is more than a minute away, reading the state every 5 seconds', async () => {
    const status = vi.fn(async () => unlocked(10 * 60_000))
    const { wrapper } = await mountWith(status)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(status).toHaveBeenCalledTimes(3)
    expect(wrapper.find('[data-test="idle-warning"]').exists()).toBe(false)
  })

  it('counts down the last minute, reading every second, until the vault reports itself locked', async () => {
    const lockAt = NOW + 65_000
    let lockedNow = false
    const status = vi.fn(async () => (lockedNow ? locked : { ...unlocked(0), idleLock: { minutes: 15, lockAt: new Date(lockAt).toISOString() } }))
    const { vault, wrapper } = await mountWith(status)
    expect(wrapper.find('[data-test="idle-warning"]').exists()).toBe(false)

    await vi.advanceTimersByTimeAsync(23_000)
    expect(wrapper.get('[data-test="idle-countdown"]').text()).toBe('The vault locks in 42 s — move the mouse or press a key to stay unlocked.')
    const calls = status.mock.calls.length
    await vi.advanceTimersByTimeAsync(3000)
    expect(status.mock.calls.length - calls).toBeGreaterThanOrEqual(3)
    expect(wrapper.get('[data-test="idle-countdown"]').text()).toContain('39 s')

    lockedNow = true
    await vi.advanceTimersByTimeAsync(1000)
    expect(vault.unlocked).toBe(false)
  })

  it('"Stay unlocked" reports activity, hides the warning and gives focus back to where the user was', async () => {
    const field = document.createElement('input')
    document.body.append(field)
    field.focus()
    const { wrapper } = await mountWith(async () => unlocked(30_000))
    await wrapper.get('[data-test="stay-unlocked"]').trigger('click')
    await vi.advanceTimersByTimeAsync(0)
    expect(reportActivity).toHaveBeenCalledTimes(1)
    expect(wrapper.find('[data-test="idle-warning"]').exists()).toBe(false)
    expect(document.activeElement).toBe(field)
  })
})
