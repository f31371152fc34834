/**
 * The idle lock over a real desktop vault: the glue reports the system's idle
 * time every second and the power events; the vault locks at the configured
 * minutes (or at once on sleep or screen lock), writes why to the audit log
 * under the desktop user, and tells the window when it will lock.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { DesktopVault } from '../../src/main/desktop/desktop-vault'
import { dispatch } from '../../src/main/desktop/dispatch'
import { createDesktopHandlers } from '../../src/main/desktop/handlers'
import { silentLogger } from '../../src/main/infra/logger'
import type { VaultStatus } from '../../src/shared/ipc'
import type { LogEntry } from '../../src/shared/types'
import { TestClock } from '../helpers/clock'
import { startTestDesktop, type TestDesktop } from '../helpers/desktop'

describe('the idle lock', () => {
  let started: TestDesktop
  let desktop: DesktopVault
  const logger = silentLogger()
  const clock = new TestClock()
  const call = async <T = unknown>(channel: string, ...args: unknown[]) => {
    const result = (await dispatch(createDesktopHandlers(desktop), channel, args, logger)) as { ok: boolean; value: T; problem?: unknown }
    if (!result.ok) throw new Error(JSON.stringify(result.problem))
    return result.value
  }
  const status = () => call<VaultStatus>('app:vault.status')

  beforeAll(async () => {
    started = await startTestDesktop({ logger, version: '1', clock })
    desktop = started.desktop
    await call('app:vault.create', { tenantName: 'Acme', keyStorage: 'key-file' })
  })
  afterAll(() => started.dispose())
  beforeEach(async () => {
    if ((await status()).state !== 'unlocked') await call('app:vault.unlock')
  })

  it('locks after 15 idle minutes by default, saying why in the audit log, and counts down before', async () => {
    expect((await call<{ idleLockMinutes: number }>('app:settings.get')).idleLockMinutes).toBe(15)
    await desktop.reportIdle(14 * 60)
    const before = await status()
    expect(before.state).toBe('unlocked')
    expect(before.idleLock).toEqual({ minutes: 15, lockAt: new Date(clock.now() + 60_000).toISOString() })

    await desktop.reportIdle(15 * 60)
    expect((await status()).state).toBe('locked')
    expect((await status()).idleLock).toBeUndefined()
    await call('app:vault.unlock')
    const entries = (await call<{ data: LogEntry[] }>('app:logs.list', { entity_type: 'vault', size: 2 })).data
    expect(entries.map((entry) => entry.message)).toEqual(['Vault unlocked in the desktop app', 'Vault locked after 15 minutes idle'])
    expect(entries[1]).toMatchObject({ operation: 'lock', actor_type: 'user' })
  })

  it('starts over when the user comes back: activity resets the system idle time', async () => {
    await desktop.reportIdle(14 * 60 + 59)
    await desktop.reportIdle(3)
    expect((await status()).idleLock?.lockAt).toBe(new Date(clock.now() + (15 * 60 - 3) * 1000).toISOString())
    expect((await status()).state).toBe('unlocked')
  })

  it('starts over when the window reports its user active ("Stay unlocked"), even if the system saw no input', async () => {
    await desktop.reportIdle(14 * 60 + 30)
    const stayed = await call<VaultStatus>('app:vault.reportActivity')
    expect(stayed.idleLock?.lockAt).toBe(new Date(clock.now() + 15 * 60_000).toISOString())
    clock.advance(10_000)
    // The system still counts from its last input; the window's report counts from the button.
    await desktop.reportIdle(14 * 60 + 40)
    expect((await status()).idleLock?.lockAt).toBe(new Date(clock.now() + (15 * 60 - 10) * 1000).toISOString())
    clock.advance(15 * 60_000)
    await desktop.reportIdle(29 * 60 + 40)
    expect((await status()).state).toBe('locked')
    expect((await call<VaultStatus>('app:vault.reportActivity')).state).toBe('locked')
  })

  it('takes the configured minutes from Settings (audited) and refuses values out of range', async () => {
    await call('app:settings.update', { idleLockMinutes: 5 })
    expect((await lastEntry('settings')).message).toBe('Idle lock changed from 15 to 5 minutes')
    await desktop.reportIdle(5 * 60 - 1)
    expect((await status()).state).toBe('unlocked')
    await desktop.reportIdle(5 * 60)
    expect((await status()).state).toBe('locked')
    await call('app:vault.unlock')
    expect((await lastVaultEntries(2))[1].message).toBe('Vault locked after 5 minutes idle')

    for (const bad of [0, 481, 2.5, '10']) {
      const result = (await dispatch(createDesktopHandlers(desktop), 'app:settings.update', [{ idleLockMinutes: bad }], logger)) as { ok: boolean; problem: { status: number; errors: Record<string, string[]> } }
      expect(result.ok).toBe(false)
      expect(result.problem.status).toBe(400)
      expect(Object.keys(result.problem.errors)).toEqual(['idleLockMinutes'])
    }
    await call('app:settings.update', { idleLockMinutes: 15 })
  })

  it.each([
    ['suspend', 'Vault locked: the computer went to sleep'],
    ['lock-screen', 'Vault locked: the screen was locked']
  ] as const)('locks at once on %s', async (event, message) => {
    await desktop.reportPowerEvent(event)
    expect((await status()).state).toBe('locked')
    await call('app:vault.unlock')
    expect((await lastVaultEntries(2))[1].message).toBe(message)
  })

  it('locks once when reports keep arriving while it locks, and does nothing while locked', async () => {
    await Promise.all([desktop.reportIdle(15 * 60), desktop.reportIdle(15 * 60 + 1), desktop.reportPowerEvent('suspend')])
    await desktop.reportIdle(20 * 60)
    await call('app:vault.unlock')
    const entries = await lastVaultEntries(3)
    expect(entries.map((entry) => entry.message)).toEqual(['Vault unlocked in the desktop app', 'Vault locked after 15 minutes idle', 'Vault unlocked in the desktop app'])
  })

  async function lastEntry(entityType: string): Promise<LogEntry> {
    return (await call<{ data: LogEntry[] }>('app:logs.list', { entity_type: entityType, size: 1 })).data[0]
  }
  async function lastVaultEntries(size: number): Promise<LogEntry[]> {
    return (await call<{ data: LogEntry[] }>('app:logs.list', { entity_type: 'vault', size })).data
  }
})
