/**
 * The key ceremonies through the desktop's IPC handlers over a real vault:
 * rotate with progress, retire with its report, rotate the master key in the
 * key file, payloads validated, every step audited as the desktop user.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KeyRetirementReport, KeyStatus } from '../../src/shared/types'
import { loadMasterKey, MASTER_KEY_FILE } from '../../src/main/bootstrap/master-key'
import { DesktopVault } from '../../src/main/desktop/desktop-vault'
import { dispatch } from '../../src/main/desktop/dispatch'
import { createDesktopHandlers } from '../../src/main/desktop/handlers'
import { silentLogger } from '../../src/main/infra/logger'
import { SMTP_PASSWORD_SETTING } from '../../src/main/app/sealed-settings.service'
import { openVault } from '../../src/main/bootstrap/vault'
import { TestClock } from '../helpers/clock'
import { startTestDesktop, type TestDesktop } from '../helpers/desktop'

type Result<T> = { ok: true; value: T } | { ok: false; problem: { status: number; detail: string; errors?: Record<string, string[]> } }

describe('key ceremonies over IPC', () => {
  let started: TestDesktop
  let dataDir: string
  let desktop: DesktopVault
  const logger = silentLogger()
  const clock = new TestClock()
  const ids: string[] = []
  const call = <T = unknown>(channel: string, ...args: unknown[]) => dispatch(createDesktopHandlers(desktop), channel, args, logger) as Promise<Result<T>>
  const value = async <T>(channel: string, ...args: unknown[]): Promise<T> => {
    const result = await call<T>(channel, ...args)
    if (!result.ok) throw new Error(`${channel}: ${JSON.stringify(result.problem)}`)
    return result.value
  }
  const runJobs = () => desktop.requireVault().services.jobs.runDueJobs()

  beforeAll(async () => {
    started = await startTestDesktop({ logger, version: '1.0.0', clock })
    ;({ dataDir, desktop } = started)
    await value('app:vault.create', { tenantName: 'Acme', keyStorage: 'key-file' })
    for (const number of ['4242424242424242', '4000056655665556']) ids.push((await value<{ id: string }>('app:tokens.create', { type: 'card', data: { number } })).id)
    await value('app:settings.update', { smtp: { host: 'smtp.example.com', port: 587, secure: false, from: 'vault@example.com', password: 'hunter2' } })
  })
  afterAll(() => started.dispose())

  it('shows the key status, the SMTP password counted as a sealed setting', async () => {
    const status = await value<KeyStatus>('app:keys.status')
    expect(status.tenants[0]).toMatchObject({ current_version: 1, versions: [{ version: 1, current: true, objects: { tokens: 2, outbox_mails: 0, sealed_settings: 1 } }] })
  })

  it('validates payloads, naming the argument', async () => {
    expect(await call('app:keys.retire', '1')).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0]': [expect.any(String)] } } })
    expect(await call('app:keys.retire', 0)).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0]': ['must be 1 or more'] } } })
    expect(await call('app:keys.report', 1.5)).toMatchObject({ ok: false, problem: { status: 400 } })
    expect(await call('app:keys.retire', 1)).toMatchObject({ ok: false, problem: { status: 409, detail: expect.stringMatching(/is the current one/) } })
    expect(await call('app:keys.report', 1)).toMatchObject({ ok: false, problem: { status: 404 } })
  })

  it('rotates: progress until the background pass has run, then retires version 1 with its report', async () => {
    const started = await value<KeyStatus>('app:keys.rotate')
    expect(started.tenants[0]).toMatchObject({ current_version: 2, rotation: { target_version: 2, total: 3, remaining: 3 } })
    expect(await call('app:keys.retire', 1)).toMatchObject({ ok: false, problem: { status: 409, detail: expect.stringMatching(/still seals 2 tokens, 1 sealed setting/) } })

    clock.advance(60_000)
    await runJobs()
    const finished = await value<KeyStatus>('app:keys.status')
    expect(finished.tenants[0].rotation).toMatchObject({ remaining: 0, finished_at: expect.any(String) })

    const report = await value<KeyRetirementReport>('app:keys.retire', 1)
    expect(report).toMatchObject({ retired_version: 1, current_version: 2, counts_after: { tokens: { 1: 0, 2: 2 }, sealed_settings: { 1: 0, 2: 1 }, token_intents: { 1: 0 }, idempotent_responses: { 1: 0 } }, retired_by: expect.stringContaining('(desktop app)') })
    expect(await value('app:keys.report', 1)).toEqual(report)
    expect((await value<{ data: unknown }>('app:tokens.reveal', ids[0], 'check after rotation')).data).toEqual({ number: '4242424242424242' })
    expect(await desktop.requireVault().services.sealedSettings.get(desktop.requireVault().tenantId, SMTP_PASSWORD_SETTING)).toBe('hunter2')
  })

  it('rotates the master key in the key file; lock and unlock open the vault with the new key, the old one is refused', async () => {
    const old = (await loadMasterKey(dataDir, {}))!
    const rotated = await value<{ key_check_value: string }>('app:keys.rotateMaster')
    expect(rotated.key_check_value).toMatch(/^[0-9a-f]{16}$/)
    expect(await loadMasterKey(dataDir, {})).not.toEqual(old)

    expect(await value('app:vault.lock')).toMatchObject({ state: 'locked' })
    await expect(openVault({ dataDir, masterKey: old, logger })).rejects.toThrow('Cannot unlock vault: the master key does not match this vault.')
    expect(await value('app:vault.unlock')).toMatchObject({ state: 'unlocked' })
    expect((await value<{ data: unknown }>('app:tokens.reveal', ids[1], 'check after master rotation')).data).toEqual({ number: '4000056655665556' })
    expect((await value<{ smtp: { hasPassword: boolean } }>('app:settings.get')).smtp.hasPassword).toBe(true)
    expect(await readFile(join(dataDir, MASTER_KEY_FILE), 'utf8')).not.toContain(Buffer.from(old).toString('base64'))
  })

  it('audits every ceremony as the desktop user', async () => {
    const logs = await value<{ data: Array<{ entity_id: string; operation: string; actor_id?: string; message: string }> }>('app:logs.list', { entity_type: 'key' })
    const owner = desktop.actor().id
    expect(logs.data.map((entry) => [entry.entity_id, entry.operation, entry.actor_id])).toEqual([
      ['master-key', 'rotate', owner],
      ['data-key-v1', 'retire', owner],
      ['data-key-v2', 'update', undefined],
      ['data-key-v2', 'rotate', owner]
    ])
    expect(logs.data[0].message).toBe('Master key rotated: every key is now wrapped under the new master key (desktop app)')
  })
})
