/**
 * Audit archive through the desktop's IPC handlers over a real vault: the
 * retention setting (validated, audited, applied by the archive-logs job) and
 * "Archive now" into the archive folder; the files verify offline.
 */
import { createReadStream } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AuditArchive, AuditArchiveStatus, DesktopSettings } from '../../src/shared/ipc'
import type { LogEntry, Page } from '../../src/shared/types'
import { verifyAuditExportLines } from '../../src/main/bootstrap/offline-vault'
import type { DesktopVault } from '../../src/main/desktop/desktop-vault'
import { dispatch } from '../../src/main/desktop/dispatch'
import { createDesktopHandlers } from '../../src/main/desktop/handlers'
import { silentLogger } from '../../src/main/infra/logger'
import { TestClock } from '../helpers/clock'
import { startTestDesktop, type TestDesktop } from '../helpers/desktop'

type Result<T> = { ok: true; value: T } | { ok: false; problem: { status: number; detail: string; errors?: Record<string, string[]> } }

const DAY = 86_400_000

describe('audit archive over IPC', () => {
  let started: TestDesktop
  let desktop: DesktopVault
  const logger = silentLogger()
  const clock = new TestClock()
  const call = <T = unknown>(channel: string, ...args: unknown[]) => dispatch(createDesktopHandlers(desktop), channel, args, logger) as Promise<Result<T>>
  const value = async <T>(channel: string, ...args: unknown[]): Promise<T> => {
    const result = await call<T>(channel, ...args)
    if (!result.ok) throw new Error(`${channel}: ${JSON.stringify(result.problem)}`)
    return result.value
  }
  const messages = async () => (await value<Page<LogEntry>>('app:logs.list', { size: 100 })).data.map((entry) => entry.message)
  const verifies = (file: string) => verifyAuditExportLines(() => createInterface({ input: createReadStream(file), crlfDelay: Infinity }))

  beforeAll(async () => {
    started = await startTestDesktop({ logger, version: '1.0.0', clock })
    desktop = started.desktop
    await value('app:vault.create', { tenantName: 'Acme', keyStorage: 'key-file' })
    for (let i = 0; i < 5; i++) await value('app:tokens.create', { type: 'token', data: `old ${i}` })
  })
  afterAll(() => started.dispose())

  it('keeps entries for ever by default, and validates the retention and the date', async () => {
    expect((await value<DesktopSettings>('app:settings.get')).auditRetentionDays).toBe(0)
    expect(await value<AuditArchiveStatus>('app:logs.archiveStatus')).toEqual({ directory: join(started.dataDir, 'audit-archive'), retentionDays: 0, last: null })
    expect(await call('app:settings.update', { auditRetentionDays: -1 })).toMatchObject({ ok: false, problem: { status: 400, errors: { auditRetentionDays: ['must be from 0 (keep for ever) to 36500 days'] } } })
    expect(await call('app:settings.update', { auditRetentionDays: 1.5 })).toMatchObject({ ok: false, problem: { status: 400, errors: { auditRetentionDays: ['must be a whole number of days'] } } })
    expect(await call('app:logs.archive', 'last week')).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0]': ['must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC, such as 2026-11-01'] } } })
    const future = new Date(clock.now() + DAY).toISOString()
    expect(await call('app:logs.archive', future)).toMatchObject({ ok: false, problem: { status: 400, errors: { before: ['must not be in the future'] } } })
  })

  it('archives now into the archive folder, logged; the file verifies and the log keeps only the rest', async () => {
    clock.advance(DAY)
    await value('app:tokens.create', { type: 'token', data: 'new' })
    const before = new Date(clock.now() - DAY / 2).toISOString()
    const archive = await value<AuditArchive>('app:logs.archive', before)
    expect(archive).toMatchObject({ entries: expect.any(Number), firstSeq: 1, before, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(archive.file.startsWith(join(started.dataDir, 'audit-archive'))).toBe(true)
    expect(await verifies(archive.file)).toMatchObject({ intact: true, entries: archive.entries, lastSeq: archive.lastSeq })
    expect((await value<AuditArchiveStatus>('app:logs.archiveStatus')).last).toEqual(archive)
    const remaining = await messages()
    expect(remaining).toContain(`Archived ${archive.entries} entries through seq ${archive.lastSeq} (created before ${before}) to ${archive.file.split('/').at(-1)} (sha256 ${archive.sha256})`)
    expect(remaining.filter((message) => message === 'Token created')).toHaveLength(1)
    expect(await value('app:logs.archive', before)).toBeNull() // nothing older left
  })

  it('saves the retention (audited), and the archive-logs job applies it', async () => {
    expect((await value<DesktopSettings>('app:settings.update', { auditRetentionDays: 1 })).auditRetentionDays).toBe(1)
    expect(await messages()).toContain('Audit retention changed from for ever to 1 day')
    clock.advance(2 * DAY)
    const results = await desktop.requireVault().services.jobs.runDueJobs()
    expect(results.find((result) => result.name === 'archive-logs')?.processed).toBeGreaterThan(0)
    const files = await readdir(join(started.dataDir, 'audit-archive'))
    expect(files).toHaveLength(2)
    const status = await value<AuditArchiveStatus>('app:logs.archiveStatus')
    expect(status).toMatchObject({ retentionDays: 1, last: { before: new Date(clock.now() - DAY).toISOString() } })
    expect(await verifies(status.last!.file)).toMatchObject({ intact: true, entries: status.last!.entries })
  })

  it('refuses to archive while the vault is locked', async () => {
    await value('app:vault.lock')
    expect(await call('app:logs.archive', '2026-11-01')).toMatchObject({ ok: false, problem: { status: 503 } })
    await value('app:vault.unlock')
  })
})
