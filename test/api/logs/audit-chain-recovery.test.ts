/**
 * The audit chain across the events a vault lives through: `kill -9` of a
 * `tessera serve` under load, the restart after it, and the first opening of
 * a vault made before the chain existed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, serve } from '../../helpers/cli'
import { startTestService } from '../../helpers/service'
import { openVaultFile } from '../../helpers/database'
import { onPostgres } from '../../helpers/postgres'

const intact = (stdout: string) => Number(/^Audit log intact: (\d+) entries/.exec(stdout)?.[1])

describe.skipIf(onPostgres)('audit chain recovery', { timeout: 180_000 }, () => {
  let root: string

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-audit-recovery-'))
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('verifies after kill -9 of `tessera serve` under load, and the restarted service continues the chain', async () => {
    const dataDir = join(root, 'killed')
    const init = await run(['init', '--data-dir', dataDir, '--json'])
    const adminKey = JSON.parse(init.stdout).application.key as string
    let server = await serve(dataDir)
    const call = (path: string, key: string, body?: unknown) =>
      fetch(server.url + path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'svc-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
    const { key } = (await (await call('/applications', adminKey, { name: 'Load', type: 'private', permissions: ['token:create', 'token:read'] })).json()) as { key: string }

    // 32 clients create and read tokens until 600 creates are acknowledged, then the process is killed mid-stream.
    let acknowledged = 0
    let killed = false
    const client = async (n: number) => {
      for (let i = 0; !killed; i++) {
        try {
          const created = await call('/tokens', key, { type: 'token', data: `client ${n} value ${i}` })
          if (created.status !== 201) throw new Error(`unexpected ${created.status}`)
          const { id } = (await created.json()) as { id: string }
          await call(`/tokens/${id}`, key)
          if (++acknowledged >= 600 && !killed) {
            killed = true
            server.child.kill('SIGKILL')
          }
        } catch (error) {
          if (!killed) throw error
        }
      }
    }
    await Promise.all(Array.from({ length: 32 }, (_, n) => client(n)))
    expect((await server.finished).signal).toBe('SIGKILL')

    const afterKill = await run(['logs', 'verify', '--data-dir', dataDir])
    expect(afterKill.code).toBe(0)
    // Every acknowledged create wrote its entry before it was answered (and its read, most of the time).
    expect(intact(afterKill.stdout)).toBeGreaterThanOrEqual(600 + 3)

    server = await serve(dataDir)
    expect((await call('/tokens', key, { type: 'token', data: 'after the restart' })).status).toBe(201)
    server.child.kill('SIGTERM')
    expect((await server.finished).code).toBe(0)
    const afterRestart = await run(['logs', 'verify', '--data-dir', dataDir])
    expect(afterRestart.code).toBe(0)
    expect(intact(afterRestart.stdout)).toBe(intact(afterKill.stdout) + 1)
  })

  it('chains the entries of a vault made before the audit chain when it is first opened, and keeps chaining', async () => {
    const service = await startTestService()
    try {
      const env = { TESSERA_MASTER_KEY: Buffer.from(service.masterKey).toString('base64') }
      await service.createApplication({ name: 'Before the chain', type: 'private', permissions: ['token:read'] })
      await service.pause()
      // What a vault of the previous version looks like once the migration has run: no keys, no MACs, no checkpoint.
      const db = openVaultFile(service.dataDir)
      await db.raw('UPDATE vault SET wrapped_audit_mac_key = NULL, wrapped_audit_signing_key = NULL')
      await db.raw('UPDATE logs SET mac = NULL')
      await db.raw('DELETE FROM log_chain')
      const legacy = Number((await db('logs').count({ n: '*' }).first())!.n)
      await db.destroy()

      await service.resume()
      expect((await service.request('GET', '/logs')).status).toBe(200)
      await service.pause()
      const result = await run(['logs', 'verify', '--data-dir', service.dataDir], env)
      expect(result.code).toBe(0)
      expect(intact(result.stdout)).toBe(legacy + 1)
    } finally {
      await service.stop()
    }
  })
})
