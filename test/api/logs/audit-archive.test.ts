/**
 * Archiving the audit log, end to end through `tessera logs archive`: the
 * archived entries go to a file that verifies offline, the vault keeps the
 * rest, whose chain still verifies from the archive's anchor, GET /logs and
 * entity queries answer from what is left, and moving the anchor, deleting a
 * kept entry or putting an archived one back is caught. A prune killed with
 * SIGKILL leaves a vault that verifies, and rerunning the archive completes it.
 */
import { createHash } from 'node:crypto'
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, start } from '../../helpers/cli'
import { withVaultFile } from '../../helpers/database'
import { startTestService, type TestService } from '../../helpers/service'
import { onPostgres } from '../../helpers/postgres'

/** The AUDIT_BROKEN and IN_USE exit codes. */
const BROKEN = 12
const IN_USE = 5

const seqs = (dir: string) => withVaultFile(dir, async (db) => (await db('logs').select('seq').orderBy('seq')).map((row) => Number(row.seq)))

describe.skipIf(onPostgres)('tessera logs archive', { timeout: 180_000 }, () => {
  const CUT = '2026-11-25T15:00:00.000Z'
  let service: TestService
  let root: string
  let env: Record<string, string>
  let file: string
  let archived: { code: number | null; stdout: string; stderr: string }
  /** Seq of the last entry created before CUT, and of the last entry before the archive. */
  let lastBefore: number
  let lastEntry: number
  let tokenIds: string[]
  let appKey: string
  /** A copy of the vault right after the archive; each tampering case works on its own copy. */
  let pristine: string

  const verify = (dir: string) => run(['logs', 'verify', '--data-dir', dir], env)

  beforeAll(async () => {
    service = await startTestService()
    root = await mkdtemp(join(tmpdir(), 'tessera-archive-'))
    env = { TESSERA_MASTER_KEY: Buffer.from(service.masterKey).toString('base64') }
    appKey = (await service.createApplication({ name: 'Load', type: 'private', permissions: ['token:create', 'token:read'] })).key
    const created = await Promise.all(Array.from({ length: 40 }, (_, i) => service.request('POST', '/tokens', { key: appKey, body: { type: 'token', data: `value ${i}` }, headers: { 'bt-trace-id': `archive-${i}` } })))
    tokenIds = created.map((response) => response.body.id as string)
    lastBefore = (await seqs(service.dataDir)).at(-1)!
    service.clock.set('2026-11-25T18:00:00.000Z')
    await Promise.all(tokenIds.slice(0, 10).map((id) => service.request('GET', `/tokens/${id}`, { key: appKey })))
    await service.host.vault.services.jobs.runDueJobs() // the entity index folds every entry so far
    await service.pause()
    lastEntry = (await seqs(service.dataDir)).at(-1)!
    file = join(root, 'archive.jsonl')
    archived = await run(['logs', 'archive', '--data-dir', service.dataDir, '--before', CUT, '--out', file], env)
    pristine = join(root, 'pristine')
    await cp(service.dataDir, pristine, { recursive: true })
  })
  afterAll(async () => {
    await service.stop()
    await rm(root, { recursive: true, force: true })
  })

  it('writes the entries created before the date to a new 0600 file that verifies offline with the vault key', async () => {
    expect(archived).toMatchObject({ code: 0 })
    expect(archived.stdout).toContain(`Archived ${lastBefore} entries (seq 1 to ${lastBefore}, created before ${CUT}) to ${file}.`)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    const publicKey = /public key (\S+)\)/.exec((await verify(service.dataDir)).stdout)![1]
    const offline = await run(['logs', 'verify', '--file', file, '--public-key', publicKey])
    expect(offline.code).toBe(0)
    expect(offline.stdout).toContain(`Export intact: ${lastBefore} entries, seq 1 to ${lastBefore}`)
    // Each create entry keeps its request's trace id, which the offline check covers.
    const traces = (await readFile(file, 'utf8')).trimEnd().split('\n').slice(1, -1).map((line) => JSON.parse(line).trace_id as string | null)
    expect(traces.filter((trace) => trace?.startsWith('archive-')).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `archive-${i}`).sort())
  })

  it('prunes exactly those entries, index rows included, and logs the archive with the file name and its SHA-256', async () => {
    expect(await seqs(service.dataDir)).toEqual(Array.from({ length: lastEntry + 1 - lastBefore }, (_, i) => lastBefore + 1 + i))
    const sha256 = createHash('sha256').update(await readFile(file)).digest('hex')
    await withVaultFile(service.dataDir, async (db) => {
      expect(Number((await db('log_entities').min({ seq: 'seq' }).first())!.seq)).toBeGreaterThan(lastBefore)
      const entry = await db('logs').where({ operation: 'archive' }).first()
      expect(entry).toMatchObject({ entity_type: 'log', actor: Buffer.from(service.ownerUserId.replaceAll('-', ''), 'hex'), seq: lastEntry + 1 })
      expect(entry.message).toBe(`Archived ${lastBefore} entries through seq ${lastBefore} (created before ${CUT}) to archive.jsonl (sha256 ${sha256})`)
    })
  })

  it('leaves the rest of the chain intact, verified from the archive on', async () => {
    const result = await verify(service.dataDir)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`Audit log intact: ${lastEntry + 1 - lastBefore} entries, chain head at seq ${lastEntry + 1} (seq 1 to ${lastBefore} archived and pruned).`)
  })

  it('refuses an existing file, a date in the future and a missing --before, before touching the vault', async () => {
    const again = await run(['logs', 'archive', '--data-dir', service.dataDir, '--before', CUT, '--out', file], env)
    expect(again.code).toBe(2)
    expect(again.stderr).toContain(`${file} already exists.`)
    const future = await run(['logs', 'archive', '--data-dir', service.dataDir, '--before', '2999-01-01', '--out', join(root, 'future.jsonl')], env)
    expect(future.code).toBe(2)
    expect(future.stderr).toContain('--before 2999-01-01T00:00:00.000Z is in the future.')
    const missing = await run(['logs', 'archive', '--data-dir', service.dataDir, '--out', join(root, 'missing.jsonl')], env)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('Missing --before DATE.')
  })

  it('writes no file when nothing is older than the date', async () => {
    const empty = join(root, 'empty.jsonl')
    const result = await run(['logs', 'archive', '--data-dir', service.dataDir, '--before', '2026-11-01', '--out', empty], env)
    expect(result).toMatchObject({ code: 0 })
    expect(result.stdout).toContain('Nothing to archive: no entries created before 2026-11-01T00:00:00.000Z. No file was written.')
    await expect(stat(empty)).rejects.toThrow()
  })

  it('answers GET /logs and entity queries from the remaining entries only', async () => {
    await service.resume()
    try {
      const page = await service.request('GET', '/logs?size=100')
      expect(page.status).toBe(200)
      const entries = page.body.data as { created_at: string; operation: string }[]
      expect(page.body.pagination.total_items).toBe(lastEntry + 1 - lastBefore)
      expect(entries.every((entry) => entry.created_at >= CUT)).toBe(true)
      // A token read after the cut keeps its read; its creation went with the archive. One only created has nothing left.
      const read = await service.request('GET', `/logs?entity_type=token&entity_id=${tokenIds[0]}`)
      expect(read.body.data.map((entry: { operation: string }) => entry.operation)).toEqual(['read'])
      const onlyCreated = await service.request('GET', `/logs?entity_type=token&entity_id=${tokenIds[30]}`)
      expect(onlyCreated.body.pagination.total_items).toBe(0)
    } finally {
      await service.pause()
    }
  })

  it('is refused while a server holds the vault, pointing at the retention setting instead', async () => {
    await service.resume()
    try {
      const result = await run(['logs', 'archive', '--data-dir', service.dataDir, '--before', CUT, '--out', join(root, 'in-use.jsonl')], env)
      expect(result.code).toBe(IN_USE)
      expect(result.stderr).toContain('TESSERA_AUDIT_RETENTION_DAYS')
    } finally {
      await service.pause()
    }
  })

  describe('tampering after an archive', () => {
    async function tampered(name: string, tamper: (db: Knex) => Promise<unknown>): Promise<string> {
      const dir = join(root, name)
      await cp(pristine, dir, { recursive: true })
      await withVaultFile(dir, tamper)
      return dir
    }

    it('catches the anchor moved forward over entries that were never archived', async () => {
      const dir = await tampered('anchor-forward', async (db) => {
        const dropped = lastBefore + 3
        const { mac } = await db('logs').select('mac').where({ seq: dropped }).first()
        await db('logs').where('seq', '<=', dropped).del()
        await db('log_chain').update({ anchor_seq: dropped, anchor_mac: mac })
      })
      const result = await verify(dir)
      expect(result.code).toBe(BROKEN)
      expect(result.stdout).toContain('the chain checkpoint or its anchor was altered')
    })

    it('catches the anchor moved back', async () => {
      const dir = await tampered('anchor-back', (db) => db('log_chain').update({ anchor_seq: lastBefore - 5 }))
      const result = await verify(dir)
      expect(result.code).toBe(BROKEN)
      expect(result.stdout).toContain('the chain checkpoint or its anchor was altered')
    })

    it('catches a deleted entry that was not archived', async () => {
      const dir = await tampered('kept-deleted', (db) => db('logs').where({ seq: lastBefore + 1 }).del())
      const result = await verify(dir)
      expect(result.code).toBe(BROKEN)
      expect(result.stdout).toContain(`Audit log BROKEN at seq ${lastBefore + 2}: the entries before it (seq ${lastBefore + 1}–${lastBefore + 1}) are missing`)
    })

    it('catches an archived entry put back', async () => {
      const dir = await tampered('put-back', async (db) => {
        const kept = await db('logs').where({ seq: lastBefore + 1 }).first()
        await db('logs').insert({ ...kept, seq: lastBefore })
      })
      const result = await verify(dir)
      expect(result.code).toBe(BROKEN)
      expect(result.stdout).toContain(`Audit log BROKEN at seq ${lastBefore}: it is in the archived range (seq 1–${lastBefore})`)
    })
  })
})

describe.skipIf(onPostgres)('tessera logs archive killed while pruning', { timeout: 300_000 }, () => {
  let service: TestService
  let root: string
  let env: Record<string, string>

  beforeAll(async () => {
    service = await startTestService()
    root = await mkdtemp(join(tmpdir(), 'tessera-archive-kill-'))
    env = { TESSERA_MASTER_KEY: Buffer.from(service.masterKey).toString('base64') }
    const { logs } = service.host.vault.services
    const actor = { id: service.ownerUserId, type: 'user' as const, tenantId: service.tenantId }
    for (let chunk = 0; chunk < 20; chunk++) {
      await Promise.all(Array.from({ length: 1500 }, (_, i) => logs.record(actor, { entityType: 'token', entityId: `t-${chunk}-${i}`, operation: 'read', message: 'Token retrieved' })))
    }
    await service.pause()
  })
  afterAll(async () => {
    await service.stop()
    await rm(root, { recursive: true, force: true })
  })

  it('leaves a vault that verifies, and a rerun archives what is left', async () => {
    const before = '2026-11-25T13:00:00.000Z'
    const total = (await seqs(service.dataDir)).length
    const first = join(root, 'first.jsonl')
    const killed = start(['logs', 'archive', '--data-dir', service.dataDir, '--before', before, '--out', first], env)
    while (!killed.output().stderr.includes('Pruning archived entries')) {
      if (killed.child.exitCode !== null) throw new Error(`archive ended before pruning: ${JSON.stringify(killed.output())}`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    killed.child.kill('SIGKILL')
    expect((await killed.finished).signal).toBe('SIGKILL')

    const left = await seqs(service.dataDir)
    expect(left[0]).toBeGreaterThan(1)
    expect(left.filter((seq) => seq <= total).length).toBeGreaterThan(0) // the prune was cut short
    expect((await run(['logs', 'verify', '--data-dir', service.dataDir], env)).code).toBe(0)
    expect((await run(['logs', 'verify', '--file', first])).stdout).toContain(`Export intact: ${total} entries, seq 1 to ${total}`)

    const second = join(root, 'second.jsonl')
    const rerun = await run(['logs', 'archive', '--data-dir', service.dataDir, '--before', before, '--out', second], env)
    expect(rerun.code).toBe(0)
    expect(rerun.stdout).toContain(`(seq ${left[0]} to ${total}, created before ${before})`)
    expect((await run(['logs', 'verify', '--file', second])).code).toBe(0)
    const verified = await run(['logs', 'verify', '--data-dir', service.dataDir], env)
    expect(verified.code).toBe(0)
    expect(verified.stdout).toContain(`(seq 1 to ${total} archived and pruned)`)
    // What is left: the two archives' own entries.
    expect(await withVaultFile(service.dataDir, async (db) => (await db('logs').select('operation')).map((row) => row.operation))).toEqual(['archive', 'archive'])
  })
})
