/**
 * The tamper-evident audit trail, end to end: entries written under group
 * commit (concurrent requests, a failed batch replayed, a restart) verify with
 * `tessera logs verify`; edits made directly to the SQLite file while the
 * service is stopped are caught and named; exports verify offline, and an
 * edited export does not.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../helpers/cli'
import { withVaultFile } from '../../helpers/database'
import { startTestService, type TestService } from '../../helpers/service'
import { onPostgres } from '../../helpers/postgres'

/** The AUDIT_BROKEN exit code. */
const BROKEN = 12

describe.skipIf(onPostgres)('tamper-evident audit log', { timeout: 120_000 }, () => {
  let service: TestService
  let root: string
  /** A copy of the vault taken with the service stopped; each tampering case works on its own copy. */
  let pristine: string
  let env: Record<string, string>
  let entries: number

  /** A fresh copy of the pristine vault, altered by `tamper` through SQL. */
  async function tampered(name: string, tamper: (db: Knex) => Promise<unknown>): Promise<string> {
    const dir = join(root, name)
    await cp(pristine, dir, { recursive: true })
    await withVaultFile(dir, tamper)
    return dir
  }

  const verify = (dir: string) => run(['logs', 'verify', '--data-dir', dir], env)

  beforeAll(async () => {
    service = await startTestService()
    root = await mkdtemp(join(tmpdir(), 'tessera-audit-'))
    env = { TESSERA_MASTER_KEY: Buffer.from(service.masterKey).toString('base64') }
    const { key } = await service.createApplication({ name: 'Load', type: 'private', permissions: ['token:create', 'token:read'] })
    // Concurrent requests share batches; the duplicate id fails its batch, which is replayed unit by unit.
    const created = await Promise.all(
      Array.from({ length: 120 }, (_, i) => service.request('POST', '/tokens', { key, body: { id: `tok-${i % 60 === 7 ? 'dup' : i}`, type: 'token', data: `value ${i}` } }))
    )
    expect(created.map((response) => response.status).sort()).toEqual([...Array(119).fill(201), 409].sort())
    const ids = created.filter((response) => response.status === 201).map((response) => response.body.id as string)
    await Promise.all(ids.map((id) => service.request('GET', `/tokens/${id}`, { key })))
    await service.request('GET', '/tokens/unknown', { key: 'key_private_wrong' })
    // Entries with a trace id the caller sent (text) beside the generated ones (UUIDs), and init's without one.
    await service.request('GET', `/tokens/${ids[0]}`, { key, headers: { 'bt-trace-id': 'audit-trace 1' } })
    await service.pause()
    await service.resume() // the chain continues from the last committed entry
    await Promise.all(ids.slice(0, 30).map((id) => service.request('GET', `/tokens/${id}`, { key })))
    await service.request('GET', '/logs')
    await service.pause()
    pristine = join(root, 'pristine')
    await cp(service.dataDir, pristine, { recursive: true })
    entries = await withVaultFile(pristine, async (db) => Number((await db('logs').count({ n: '*' }).first())!.n))
  })
  afterAll(async () => {
    await service.stop()
    await rm(root, { recursive: true, force: true })
  })

  it('numbers entries without gaps, a failed batch and a restart included', async () => {
    const seqs = await withVaultFile(pristine, async (db) => (await db('logs').select('seq').orderBy('seq')).map((row) => row.seq))
    expect(seqs).toEqual(Array.from({ length: entries }, (_, i) => i + 1))
    expect(entries).toBeGreaterThan(250)
  })

  it('chains entries with and without a trace id', async () => {
    const traces = await withVaultFile(pristine, async (db) => (await db('logs').select('trace').orderBy('seq')).map((row) => (row.trace === null ? null : row.trace.length)))
    expect(traces[0]).toBeNull()
    expect(traces).toContain(16)
    expect(traces).toContain('audit-trace 1'.length)
  })

  it('stores the tokens’ entries with their messages as one-byte codes', async () => {
    const stored = await withVaultFile(pristine, (db) => db('logs').select('message').whereIn('seq', [45, 50]).orderBy('seq'))
    expect(stored.map((row) => Buffer.isBuffer(row.message) && row.message.length)).toEqual([1, 1])
  })

  it('verifies an untouched vault (exit 0) and prints the export signing key', async () => {
    const result = await verify(pristine)
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain(`Audit log intact: ${entries} entries, chain head at seq ${entries}.`)
    expect(result.stdout).toMatch(/Export signing key: [0-9a-f]{4}(:[0-9a-f]{4}){7} \(public key [A-Za-z0-9+/]{43}=\)/)
  })

  it.each([
    ['an edited message', 'UPDATE logs SET message = ? WHERE seq = 40', ['Token deleted'], 40, 'its content was changed'],
    ['a message code changed to another', 'UPDATE logs SET message = ? WHERE seq = 45', [Buffer.of(9)], 45, 'its content was changed'],
    ['a message code no message has', 'UPDATE logs SET message = ? WHERE seq = 50', [Buffer.of(250)], 50, 'its content was changed'],
    ['a changed created_at', 'UPDATE logs SET created_at = created_at - 3600000 WHERE seq = 55', [], 55, 'its content was changed'],
    ['a changed actor', 'UPDATE logs SET actor = NULL, actor_type_code = NULL WHERE seq = 70', [], 70, 'its content was changed'],
    ['an edited trace id', 'UPDATE logs SET trace = ? WHERE seq = 75', [Buffer.from('someone-else')], 75, 'its content was changed'],
    ['a removed trace id', 'UPDATE logs SET trace = NULL WHERE seq = 80', [], 80, 'its content was changed'],
    ['a trace id added to an entry without one', 'UPDATE logs SET trace = ? WHERE seq = 1', [Buffer.from('planted')], 1, 'its content was changed'],
    ['a deleted entry', 'DELETE FROM logs WHERE seq = 90', [], 91, 'the entries before it (seq 90–90) are missing'],
    ['an entry written without a MAC', 'UPDATE logs SET mac = NULL WHERE seq = 100', [], 100, 'it has no MAC']
  ])('fails on %s, naming the first broken link', async (name, sql, bindings, seq, problem) => {
    const dir = await tampered(name.replaceAll(' ', '-'), (db) => db.raw(sql, bindings))
    const result = await verify(dir)
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toContain(`Audit log BROKEN at seq ${seq}: ${problem}`)
  })

  it('fails on two entries whose contents were swapped, at the first of them', async () => {
    const columns = ['tenant_key', 'actor', 'actor_type_code', 'entity_type', 'entity_id', 'operation', 'message', 'created_at', 'count', 'trace']
    const dir = await tampered('swapped', async (db) => {
      const [a, b] = await db('logs').select(columns).whereIn('seq', [120, 200]).orderBy('seq')
      await db('logs').update(b).where({ seq: 120 })
      await db('logs').update(a).where({ seq: 200 })
    })
    const result = await verify(dir)
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toMatch(/^Audit log BROKEN at seq 120: /)
  })

  it('fails on an entry slipped in below the first one', async () => {
    const dir = await tampered('below-first', async (db) => {
      const first = await db('logs').where({ seq: 1 }).first()
      await db('logs').insert({ ...first, seq: -7, message: 'Planted' })
    })
    const result = await verify(dir)
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toContain('Audit log BROKEN at seq -7: it was inserted before the first entry')
  })

  it('fails on two entries moved into each other’s place, MACs and all', async () => {
    const dir = await tampered('reordered', async (db) => {
      await db.raw('UPDATE logs SET seq = -1 WHERE seq = 150')
      await db.raw('UPDATE logs SET seq = 150 WHERE seq = 151')
      await db.raw('UPDATE logs SET seq = 151 WHERE seq = -1')
    })
    const result = await verify(dir)
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toContain('Audit log BROKEN at seq 150: it was replaced or inserted')
  })

  it('fails when the newest entries were deleted, against the checkpoint written at the last stop', async () => {
    const dir = await tampered('truncated', (db) => db.raw('DELETE FROM logs WHERE seq > ?', [entries - 5]))
    const result = await verify(dir)
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toContain(`Audit log BROKEN at seq ${entries - 4}: the newest entries are missing`)
  })

  it('refuses a vault whose audit key was removed to have the chain rebuilt over edits', async () => {
    const dir = await tampered('keyless', (db) => db.raw('UPDATE vault SET wrapped_audit_mac_key = NULL, wrapped_audit_signing_key = NULL'))
    const result = await verify(dir)
    expect(result.code).toBe(3)
    expect(result.stderr).toMatch(/lost its audit key/)
  })

  describe('export', () => {
    let file: string
    let publicKey: string

    beforeAll(async () => {
      file = join(root, 'export.jsonl')
      publicKey = /\(public key (\S+)\)/.exec((await verify(pristine)).stdout)![1]
      const result = await run(['logs', 'export', '--data-dir', pristine, '--out', file], env)
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(new RegExp(`^Exported ${entries} entries, seq 1 to ${entries} to `))
    })

    const verifyFile = (path: string, ...args: string[]) => run(['logs', 'verify', '--file', path, ...args])

    /** A copy of the export with its lines changed by `edit`. */
    async function editedExport(name: string, edit: (lines: string[]) => string[]): Promise<string> {
      const path = join(root, name)
      await writeFile(path, edit((await readFile(file, 'utf8')).trimEnd().split('\n')).join('\n') + '\n')
      return path
    }

    it('verifies offline, without the vault or its key, and pins the signing key', async () => {
      const lines = (await readFile(file, 'utf8')).split('\n')
      expect(lines[1]).toContain('"trace_id":null')
      expect(lines.some((line) => line.includes('"trace_id":"audit-trace 1"'))).toBe(true)
      const result = await verifyFile(file)
      expect(result.code).toBe(0)
      expect(result.stdout).toContain(`Export intact: ${entries} entries, seq 1 to ${entries}`)
      expect(result.stdout).toContain(`--public-key ${publicKey}`)
      expect((await verifyFile(file, '--public-key', publicKey)).stdout).toContain('(the pinned key)')
      const other = Buffer.alloc(32, 7).toString('base64')
      const wrongKey = await verifyFile(file, '--public-key', other)
      expect(wrongKey.code).toBe(BROKEN)
      expect(wrongKey.stdout).toContain('not by the pinned key')
    })

    it.each([
      ['an edited message', (lines: string[]) => lines.map((line, i) => (i === 10 ? line.replace(/"message":"[^"]*"/, '"message":"Nothing happened"') : line)), 'line 11 (seq 10): it was changed'],
      ['an edited trace id', (lines: string[]) => lines.map((line, i) => (i === 12 ? line.replace(/"trace_id":"[^"]*"/, '"trace_id":"someone-else"') : line)), 'line 13 (seq 12): it was changed'],
      ['a removed trace id', (lines: string[]) => lines.map((line, i) => (i === 14 ? line.replace(/"trace_id":"[^"]*",/, '') : line)), 'line 15 (seq 14): it was changed'],
      ['a removed entry', (lines: string[]) => lines.filter((_, i) => i !== 20), 'line 21 (seq 21): the entries before it (seq 20–20) are missing'],
      ['a cut-off end', (lines: string[]) => lines.slice(0, -3), 'the signed head is missing'],
      ['an edited header', (lines: string[]) => [lines[0].replace('"since":null', '"since":"2020-01-01T00:00:00.000Z"'), ...lines.slice(1)], 'line 2 (seq 1): it or the header was changed']
    ])('fails offline on %s', async (name, edit, problem) => {
      const result = await verifyFile(await editedExport(`export-${name.replaceAll(' ', '-')}`, edit))
      expect(result.code).toBe(BROKEN)
      expect(result.stdout).toMatch(/^Export BROKEN at line \d+/)
      expect(result.stdout).toContain(problem)
    })

    it('fails offline when entries were removed and every hash after them recomputed', async () => {
      const { anchorHash, entryHash } = await import('../../../src/main/crypto/audit')
      const path = await editedExport('rehashed', (lines) => {
        const kept = lines.filter((_, i) => i !== 5)
        let hash = anchorHash(kept[0])
        return kept.map((line, i) => {
          if (i === 0 || i === kept.length - 1) return line
          const entry = JSON.parse(line)
          hash = entryHash(hash, { ...entry, created_at: Date.parse(entry.created_at) }, Buffer.from(entry.mac, 'hex'))
          return JSON.stringify({ ...entry, hash: hash.toString('hex') })
        })
      })
      const result = await verifyFile(path)
      expect(result.code).toBe(BROKEN)
      expect(result.stdout).toContain('the head does not match the entries')
    })

    it('exports a date range that verifies on its own, anchored to the entry before it', async () => {
      const times = await withVaultFile(pristine, async (db) => db('logs').select('seq', 'created_at').whereIn('seq', [50, 60]).orderBy('seq'))
      const since = new Date(Number(times[0].created_at)).toISOString()
      const range = join(root, 'range.jsonl')
      const exported = await run(['logs', 'export', '--data-dir', pristine, '--out', range, '--since', since], env)
      expect(exported.code).toBe(0)
      const [header, first] = (await readFile(range, 'utf8')).split('\n').map((line) => JSON.parse(line || 'null'))
      expect(header.previous.seq).toBe(first.seq - 1)
      expect(first.seq).toBeLessThanOrEqual(50)
      const result = await verifyFile(range, '--public-key', publicKey)
      expect(result.code).toBe(0)
      expect(result.stdout).toContain(`seq ${first.seq} to ${entries}`)
    })

    it('refuses to export a broken chain, writing no file', async () => {
      const dir = await tampered('export-broken', (db) => db.raw('UPDATE logs SET message = ? WHERE seq = 3', ['edited']))
      const out = join(root, 'never.jsonl')
      const result = await run(['logs', 'export', '--data-dir', dir, '--out', out], env)
      expect(result.code).toBe(BROKEN)
      expect(result.stdout).toContain('Not exported: The audit log is broken at seq 3')
      await expect(readFile(out)).rejects.toMatchObject({ code: 'ENOENT' })
    })

    it('rejects a bad date, and a missing --out, with exit code 2 naming the option', async () => {
      const result = await run(['logs', 'export', '--data-dir', pristine, '--out', join(root, 'x.jsonl'), '--since', 'last week'], env)
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/--since must be an ISO 8601 date/)
      const noOut = await run(['logs', 'export', '--data-dir', pristine], env)
      expect(noOut.code).toBe(2)
      expect(noOut.stderr).toMatch(/Missing --out FILE/)
    })
  })
})
