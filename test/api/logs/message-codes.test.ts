/**
 * The frequent constant audit messages are stored compactly (a one-byte code on
 * SQLite, the text on PostgreSQL), yet every reader sees the text: GET /logs
 * gives each entry's message as written, whether it was stored as a code or as
 * text, and `tessera logs verify` finds the chain intact. Runs on both engines;
 * the edits to the stored rows on SQLite only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEntry } from '../../../src/shared/types'
import { run } from '../../helpers/cli'
import { teamDatabases, withVaultFile } from '../../helpers/database'
import { onPostgres } from '../../helpers/postgres'
import { startTestService, type TestService } from '../../helpers/service'

const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']

describe('audit messages as stored', { timeout: 60_000 }, () => {
  let service: TestService
  let key: string
  let tokenId: string

  beforeAll(async () => {
    service = await startTestService()
    key = (await service.createApplication({ name: 'Checkout', type: 'private', permissions: CRUD })).key
    tokenId = (await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'kept' } })).body.id
    expect((await service.request('GET', `/tokens/${tokenId}`, { key })).status).toBe(200)
    const patched = await service.request('PATCH', `/tokens/${tokenId}`, { key, body: { metadata: { a: 'b' } }, contentType: 'application/merge-patch+json' })
    expect(patched.status).toBe(200)
    expect((await service.request('DELETE', `/tokens/${tokenId}`, { key })).status).toBe(204)
  })
  afterAll(() => service.stop())

  const messagesOf = async (entityId: string): Promise<string[]> =>
    ((await service.request('GET', `/logs?entity_id=${entityId}&size=100`)).body.data as LogEntry[]).map((entry) => entry.message)

  async function verify(): Promise<{ code: number | null; stdout: string }> {
    const databaseUrl = teamDatabases.get(service.dataDir)
    const env = { TESSERA_MASTER_KEY: Buffer.from(service.masterKey).toString('base64') }
    return run(['logs', 'verify', '--data-dir', service.dataDir, ...(databaseUrl ? ['--database-url', databaseUrl] : [])], env)
  }

  /** Stops the service, runs `work` on its database, and starts it again. */
  async function whileStopped<T>(work: () => Promise<T>): Promise<T> {
    await service.pause()
    try {
      return await work()
    } finally {
      await service.resume()
    }
  }

  it('gives each per-token entry its message text over GET /logs', async () => {
    expect(await messagesOf(tokenId)).toEqual(['Token deleted', 'Token updated', 'Token retrieved', 'Token created'])
  })

  it('gives a message outside the catalogue as written', async () => {
    await service.request('GET', '/logs?size=3&entity_type=token')
    const [read] = (await service.request('GET', '/logs?entity_type=log&size=1')).body.data as LogEntry[]
    expect(read.message).toBe('Audit log listed: page 1, 3 of 4 entries, filtered by entity type token')
  })

  it('stores a catalogued message as a one-byte code on SQLite and as its text on PostgreSQL, any other as text', async () => {
    const stored = await withVaultFile(service.dataDir, async (db) => ({
      created: (await db('logs').select('message').where({ entity_id: tokenId, operation: 'create' }).first()).message,
      listed: (await db('logs').select('message').where({ entity_type: 'log' }).orderBy('seq', 'desc').first()).message
    }))
    expect(stored.created).toEqual(onPostgres ? 'Token created' : Buffer.of(1))
    expect(stored.listed).toMatch(/^Audit log listed: page 1/)
  })

  it('verifies the chain with coded and text messages alike', async () => {
    const result = await whileStopped(verify)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Audit log intact')
  })

  it.skipIf(onPostgres)('reads and verifies an entry whose catalogued message is stored as text, as entries written before codes are', async () => {
    const result = await whileStopped(async () => {
      await withVaultFile(service.dataDir, (db) => db('logs').update({ message: 'Token retrieved' }).where({ entity_id: tokenId, operation: 'read' }))
      expect(await withVaultFile(service.dataDir, (db) => db.raw("SELECT count(*) AS n FROM logs WHERE typeof(message) = 'text' AND message = 'Token retrieved'"))).toEqual([{ n: 1 }])
      return verify()
    })
    expect(result.code).toBe(0)
    expect(await messagesOf(tokenId)).toEqual(['Token deleted', 'Token updated', 'Token retrieved', 'Token created'])
  })
})
