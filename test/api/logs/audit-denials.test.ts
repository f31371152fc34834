/**
 * Failed authentication (401) and refused operations (403) in the audit log:
 * aggregated per minute so a flood cannot fill the disk, flushed at the
 * minute's end and on a graceful stop, never holding the presented secret.
 */
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MAX_DENIAL_ENTRIES_PER_MINUTE } from '../../../src/main/app/denials.service'
import type { LogEntry } from '../../../src/shared/types'
import { startTestService, type TestService } from '../../helpers/service'

describe('refused requests in the audit log', () => {
  let service: TestService

  beforeEach(async () => {
    service = await startTestService()
  })
  afterEach(() => service.stop())

  const refusals = async (): Promise<LogEntry[]> => (await service.request('GET', '/logs?entity_type=request&size=100')).body.data

  /** Sends `count` requests, 50 at a time. */
  async function flood(count: number, send: (i: number) => Promise<{ status: number }>): Promise<void> {
    for (let start = 0; start < count; start += 50) {
      const statuses = await Promise.all(Array.from({ length: Math.min(50, count - start) }, (_, i) => send(start + i)))
      expect(new Set(statuses.map((response) => response.status))).toEqual(new Set([401]))
    }
  }

  it('logs 300 requests with a wrong key as one entry counting 300, without any of the key in the database', async () => {
    const secret = randomBytes(32).toString('base64url')
    const key = `key_private_${secret}`
    await flood(300, (i) => service.request('GET', `/tokens/token-${i}`, { key }))

    await service.host.vault.services.denials.flush() // what the end of the minute does
    const files = ['tessera.db', 'tessera.db-wal'].map((name) => join(service.dataDir, name)).filter((file) => existsSync(file))
    const raw = Buffer.concat(await Promise.all(files.map((file) => readFile(file))))
    expect(raw.includes(secret)).toBe(false)
    expect(raw.includes(secret.slice(0, 8))).toBe(false)

    expect(await refusals()).toEqual([
      {
        tenant_id: service.tenantId,
        entity_type: 'request',
        entity_id: 'GET /tokens/:id',
        operation: 'unauthenticated',
        message: '300 requests from 127.0.0.1 refused with 401 between 2026-11-25T12:00:00.000Z and 2026-11-25T12:00:00.000Z: unknown key (type key_private)',
        created_at: '2026-11-25T12:00:00.000Z',
        count: 300,
        trace_id: expect.stringMatching(/^[0-9a-f-]{36}$/)
      }
    ])
  })

  it('keeps one entry per reason and route, and writes what it counted when the service stops', async () => {
    await flood(20, (i) => service.request('POST', '/tokens', { key: i % 2 ? null : 'key_sess_x', body: { type: 'token', data: i } }))
    await flood(5, () => service.request('GET', '/no/such/route', { key: 'not-a-key' }))
    await service.pause() // a graceful stop writes the counts
    await service.resume()
    const entries = await refusals()
    expect(entries.map((entry) => [entry.entity_id, entry.count, entry.message.replace(/ between .*: /, ': ')])).toEqual(
      expect.arrayContaining([
        ['POST /tokens', 10, '10 requests from 127.0.0.1 refused with 401: missing SVC-API-KEY header'],
        ['POST /tokens', 10, '10 requests from 127.0.0.1 refused with 401: unknown key (type key_sess)'],
        ['GET (no such route)', 5, '5 requests from 127.0.0.1 refused with 401: unknown key (type unrecognised)']
      ])
    )
    expect(entries).toHaveLength(3)
  })

  it('logs refused operations (403) with the caller as actor', async () => {
    const app = await service.createApplication({ name: 'No logs', type: 'management', permissions: ['application:read'] })
    for (let i = 0; i < 3; i++) expect((await service.request('GET', '/logs', { key: app.key })).status).toBe(403)
    await service.host.vault.services.denials.flush()
    expect(await refusals()).toEqual([
      expect.objectContaining({
        actor_id: app.id,
        actor_type: 'application',
        entity_id: 'GET /logs',
        operation: 'forbidden',
        count: 3,
        message: expect.stringMatching(/^3 requests from 127\.0\.0\.1 refused with 403 between .*: The caller lacks the log:read permission\.$/)
      })
    ])
  })

  it('writes the previous minute once a new one begins', async () => {
    expect((await service.request('GET', '/logs', { key: null })).status).toBe(401)
    service.clock.advance(60_000)
    expect((await service.request('GET', '/logs', { key: null })).status).toBe(401)
    // A write queued after the first minute's entry commits after it.
    await service.createApplication({ name: 'Later', type: 'private', permissions: ['token:read'] })
    expect((await refusals()).map((entry) => [entry.created_at, entry.count])).toEqual([['2026-11-25T12:00:00.000Z', 1]])
  })

  it('bounds the entries of a minute, however many sources, reasons and routes a flood uses', async () => {
    const denials = service.host.vault.services.denials
    for (let i = 0; i < 3 * MAX_DENIAL_ENTRIES_PER_MINUTE; i++) {
      denials.record({ status: 401, reason: 'unknown key (type key_private)', source: `10.0.${i >> 8}.${i & 255}`, operation: 'GET /tokens' })
    }
    await denials.flush()
    const page = (number: number) => service.request('GET', `/logs?entity_type=request&size=100&page=${number}`)
    const entries: LogEntry[] = [...(await page(1)).body.data, ...(await page(2)).body.data]
    expect(entries).toHaveLength(MAX_DENIAL_ENTRIES_PER_MINUTE + 1)
    expect(entries.reduce((sum, entry) => sum + (entry.count ?? 0), 0)).toBe(3 * MAX_DENIAL_ENTRIES_PER_MINUTE)
    expect(entries.find((entry) => entry.entity_id === 'several operations')).toMatchObject({ count: 2 * MAX_DENIAL_ENTRIES_PER_MINUTE })
  })
})
