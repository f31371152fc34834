/**
 * The audit retention: the `archive-logs` sweep archives the entries older
 * than the retention into dated files of `<data dir>/audit-archive/`, judged
 * by the injected clock; the files verify offline and the vault's chain still
 * verifies. GET /logs keeps answering while an archive prunes.
 */
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../../src/main/storage/connections'
import { run } from '../helpers/cli'
import { startTestService, type TestService } from '../helpers/service'

const HOUR = 3_600_000
const DAY = 24 * HOUR

describe('audit retention (archive-logs)', { timeout: 180_000 }, () => {
  let service: TestService
  let env: Record<string, string>
  const archiveDir = () => join(service.dataDir, 'audit-archive')
  const jobs = () => service.host.vault.services.jobs
  const archived = async () => (await jobs().runDueJobs()).find((result) => result.name === 'archive-logs')

  async function readTokens(count: number, key: string, id: string) {
    await Promise.all(Array.from({ length: count }, () => service.request('GET', `/tokens/${id}`, { key })))
  }

  beforeAll(async () => {
    service = await startTestService({ auditRetentionDays: 2 })
    env = { TESSERA_MASTER_KEY: Buffer.from(service.masterKey).toString('base64') }
  })
  afterAll(() => service.stop())

  it('archives nothing while every entry is younger than the retention', async () => {
    expect(await archived()).toEqual({ name: 'archive-logs', processed: 0 })
    await expect(readdir(archiveDir())).rejects.toThrow()
  })

  it('archives the entries older than the retention once they are, into a dated 0600 file that verifies', async () => {
    const { key } = await service.createApplication({ name: 'Reader', type: 'private', permissions: ['token:create', 'token:read'] })
    const token = await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'kept for a while' } })
    await readTokens(20, key, token.body.id)
    const oldEntries = Number((await sql(service.host.vault.db.reader)('logs').count({ n: '*' }).first())!.n)
    service.clock.advance(DAY)
    await readTokens(5, key, token.body.id) // a day old at the next run: kept
    service.clock.advance(DAY + HOUR)
    expect(await archived()).toEqual({ name: 'archive-logs', processed: oldEntries })

    const files = await readdir(archiveDir())
    expect(files).toEqual([`audit-2026-11-27T13-00-00.000Z-seq-1-${oldEntries}.jsonl`])
    expect((await stat(join(archiveDir(), files[0]))).mode & 0o777).toBe(0o600)
    expect((await stat(archiveDir())).mode & 0o777).toBe(0o700)
    expect((await run(['logs', 'verify', '--file', join(archiveDir(), files[0])])).stdout).toContain(`Export intact: ${oldEntries} entries, seq 1 to ${oldEntries}`)

    const logs = (await service.request('GET', '/logs?size=100')).body.data as { created_at: string; message: string; operation: string }[]
    expect(logs.every((entry) => Date.parse(entry.created_at) >= service.clock.now() - 2 * DAY)).toBe(true)
    const entry = logs.find((candidate) => candidate.operation === 'archive')!
    expect(entry.message).toMatch(new RegExp(`^Archived ${oldEntries} entries through seq ${oldEntries} \\(created before 2026-11-25T13:00:00.000Z\\) to ${files[0]} \\(sha256 [0-9a-f]{64}\\)$`))
    expect(entry).not.toHaveProperty('actor_id')
  })

  it('runs again only an hour later, and then archives what has aged since', async () => {
    service.clock.advance(HOUR - 1)
    expect(await archived()).toBeUndefined()
    service.clock.advance(DAY)
    expect((await archived())?.processed).toBe(5) // the reads of the second day
    expect(await readdir(archiveDir())).toHaveLength(2)
  })

  it('leaves a vault whose chain verifies', async () => {
    await service.pause()
    try {
      const result = await run(['logs', 'verify', '--data-dir', service.dataDir], env)
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/archived and pruned\)\.$/m)
    } finally {
      await service.resume()
    }
  })

  it('keeps answering GET /logs while an archive prunes', async () => {
    const { logs, auditArchive } = service.host.vault.services
    const actor = { id: service.ownerUserId, type: 'user' as const, tenantId: service.tenantId }
    for (let chunk = 0; chunk < 10; chunk++) {
      await Promise.all(Array.from({ length: 1000 }, (_, i) => logs.record(actor, { entityType: 'token', entityId: `t-${chunk}-${i}`, operation: 'read', message: 'Token retrieved' })))
    }
    service.clock.advance(HOUR)
    let pruned = 0
    let done = false
    const archiving = auditArchive
      .archive(actor, { before: service.clock.now(), file: join(archiveDir(), 'by-hand.jsonl'), onProgress: (count) => (pruned = count) })
      .finally(() => (done = true))
    // Once the prune has begun, ask: the answer comes while it still runs.
    while (pruned === 0 && !done) await new Promise((resolve) => setTimeout(resolve, 2))
    const response = await service.request('GET', '/logs?size=5')
    const answeredWhilePruning = !done
    expect((await archiving)?.entries).toBeGreaterThanOrEqual(10_000)
    expect(response.status).toBe(200)
    expect(answeredWhilePruning).toBe(true)
  })
})
