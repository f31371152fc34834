/**
 * BT-IDEMPOTENCY-KEY over HTTP: a retry replays the first response (one token
 * made), a different request under the key is a 422, a request arriving while
 * the first runs a 409, keys are the caller's own, and responses are kept 24
 * hours, sealed. Runs on both engines.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sql } from '../../../src/main/storage/connections'
import { onPostgres } from '../../helpers/postgres'
import { startTestService, type TestService } from '../../helpers/service'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

const HOUR = 3_600_000
const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']
const REVEALING_APP = { name: 'Checkout', type: 'private', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: CRUD }] }

describe('BT-IDEMPOTENCY-KEY', () => {
  let service: TestService
  let key: string
  let keyCount = 0

  beforeAll(async () => {
    service = await startTestService()
    key = (await service.createApplication(REVEALING_APP)).key
  })
  afterAll(() => service.stop())

  const newKey = () => `retry-${++keyCount}`
  const create = (idempotencyKey: string, body: unknown, as = key) => service.request('POST', '/tokens', { key: as, body, headers: { 'BT-IDEMPOTENCY-KEY': idempotencyKey } })
  const tokenCount = async () => (await service.request('GET', '/tokens?size=100', { key })).body.pagination.total_items as number
  const storedKeys = () => sql(service.host.vault.services.context.reader)('idempotency_keys').select('idempotency_key', 'status_code')
  async function sweep(): Promise<number | undefined> {
    return (await service.host.vault.services.jobs.runDueJobs()).find((result) => result.name === 'expire-idempotency-keys')?.processed
  }

  it('replays the first response to a retry: the same status and body, one token made', async () => {
    const before = await tokenCount()
    const idempotencyKey = newKey()
    const first = await create(idempotencyKey, { type: 'token', data: 'once only' })
    const retry = await create(idempotencyKey, { type: 'token', data: 'once only' })
    expect(first.status).toBe(201)
    expect(retry.status).toBe(201)
    expect(retry.body).toEqual(first.body)
    expect(await tokenCount()).toBe(before + 1)
  })

  it('audits each replay', async () => {
    const idempotencyKey = newKey()
    await create(idempotencyKey, { type: 'token', data: 'audited' })
    await create(idempotencyKey, { type: 'token', data: 'audited' })
    const logs = (await service.request('GET', '/logs?entity_type=idempotency-key')).body.data as Array<Record<string, unknown>>
    expect(logs[0]).toMatchObject({ operation: 'read', message: 'Stored response (201) replayed for POST /tokens' })
  })

  it('replays text bodies and empty ones too: POST /tokenize and DELETE', async () => {
    const tokenizeKey = newKey()
    const tokenize = () => service.request('POST', '/tokenize', { key, body: { type: 'token', data: 'tokenized once' }, headers: { 'BT-IDEMPOTENCY-KEY': tokenizeKey } })
    const first = await tokenize()
    const retry = await tokenize()
    expect(retry.status).toBe(first.status)
    expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'))
    expect(retry.body).toEqual(first.body)

    const id = first.body.id as string
    const deleteKey = newKey()
    const remove = () => service.request('DELETE', `/tokens/${id}`, { key, headers: { 'BT-IDEMPOTENCY-KEY': deleteKey } })
    expect((await remove()).status).toBe(204)
    // Without the key this would be a 404: the token is gone.
    expect((await remove()).status).toBe(204)
  })

  it('reads compressed bodies as the route would: a gzip create runs once and is replayed', async () => {
    const idempotencyKey = newKey()
    const send = async () => {
      const response = await fetch(`${service.url}/tokens`, {
        method: 'POST',
        headers: { 'SVC-API-KEY': key, 'BT-IDEMPOTENCY-KEY': idempotencyKey, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        body: gzipSync(JSON.stringify({ type: 'token', data: 'compressed' }))
      })
      return { status: response.status, body: (await response.json()) as { id: string; data: string } }
    }
    const first = await send()
    expect(first).toMatchObject({ status: 201, body: { data: 'compressed' } })
    expect((await send()).body.id).toBe(first.body.id)
  })

  it('refuses (422, naming the header) a different body, method or path under a used key, and runs nothing', async () => {
    const idempotencyKey = newKey()
    await create(idempotencyKey, { type: 'token', data: 'first' })
    const before = await tokenCount()
    const other = await create(idempotencyKey, { type: 'token', data: 'second' })
    expect(other.status).toBe(422)
    expect(other.headers.get('content-type')).toContain('application/problem+json')
    expect(other.body.errors).toEqual({ 'BT-IDEMPOTENCY-KEY': [expect.any(String)] })
    const otherPath = await service.request('POST', '/tokenize', { key, body: { type: 'token', data: 'first' }, headers: { 'BT-IDEMPOTENCY-KEY': idempotencyKey } })
    expect(otherPath.status).toBe(422)
    expect(await tokenCount()).toBe(before)
  })

  it('refuses (409) a request arriving while the first under its key still runs', async () => {
    const idempotencyKey = newKey()
    const body = JSON.stringify({ type: 'token', data: 'slow' })
    // The first request sends its headers and half its body, then waits: it holds the key meanwhile.
    const first = httpRequest(`${service.url}/tokens`, {
      method: 'POST',
      headers: { 'SVC-API-KEY': key, 'BT-IDEMPOTENCY-KEY': idempotencyKey, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }
    })
    const firstResponse = new Promise<number>((resolve, reject) => {
      first.on('response', (response) => {
        response.resume()
        resolve(response.statusCode!)
      })
      first.on('error', reject)
    })
    first.write(body.slice(0, 10))
    await vi.waitFor(async () => expect((await storedKeys()).map((row) => row.idempotency_key)).toContain(idempotencyKey))

    const second = await create(idempotencyKey, JSON.parse(body))
    expect(second.status).toBe(409)
    expect(second.headers.get('content-type')).toContain('application/problem+json')

    first.end(body.slice(10))
    expect(await firstResponse).toBe(201)
    const retry = await create(idempotencyKey, JSON.parse(body))
    expect(retry.status).toBe(201)
  })

  it('frees the key when the request fails, so a corrected retry runs', async () => {
    const idempotencyKey = newKey()
    const invalid = await create(idempotencyKey, { type: 'card', data: { number: '4242424242424241' } })
    expect(invalid.status).toBe(400)
    const failedAgain = await create(idempotencyKey, { type: 'card', data: { number: '4242424242424241' } })
    expect(failedAgain.status).toBe(400)
    expect((await storedKeys()).map((row) => row.idempotency_key)).not.toContain(idempotencyKey)
  })

  it('keeps keys apart per caller: another application’s equal key runs its own request', async () => {
    const other = (await service.createApplication({ ...REVEALING_APP, name: 'Other' })).key
    const idempotencyKey = newKey()
    const mine = await create(idempotencyKey, { type: 'token', data: 'shared key' })
    const theirs = await create(idempotencyKey, { type: 'token', data: 'shared key' }, other)
    expect(theirs.status).toBe(201)
    expect(theirs.body.id).not.toBe(mine.body.id)
  })

  it('ignores the header on reads, and refuses (400, naming it) a key too long or unprintable', async () => {
    const read = await service.request('GET', '/tokens', { key, headers: { 'BT-IDEMPOTENCY-KEY': newKey() } })
    expect(read.status).toBe(200)
    const tooLong = await create('k'.repeat(256), { type: 'token', data: 'x' })
    expect(tooLong.status).toBe(400)
    expect(tooLong.body.errors).toEqual({ 'BT-IDEMPOTENCY-KEY': [expect.any(String)] })
    expect((await create('k'.repeat(255), { type: 'token', data: 'x' })).status).toBe(201)
  })

  it('replays for 24 hours; then the key runs afresh, and the sweep deletes what expired', async () => {
    const idempotencyKey = newKey()
    const first = await create(idempotencyKey, { type: 'token', data: 'a day' })
    service.clock.advance(24 * HOUR - 1)
    expect((await create(idempotencyKey, { type: 'token', data: 'a day' })).body.id).toBe(first.body.id)
    service.clock.advance(1)
    const later = await create(idempotencyKey, { type: 'token', data: 'a day' })
    expect(later.status).toBe(201)
    expect(later.body.id).not.toBe(first.body.id)

    const swept = newKey()
    await create(swept, { type: 'token', data: 'swept' })
    service.clock.advance(24 * HOUR)
    expect(await sweep()).toBeGreaterThanOrEqual(1)
    expect((await storedKeys()).map((row) => row.idempotency_key)).not.toContain(swept)
  })

  it('re-encrypts stored responses on key rotation, and retires a version only when none uses it; replays go on', async () => {
    const keys = service.host.vault.services.keys
    const actor = { userId: service.ownerUserId, via: 'test' }
    const idempotencyKey = newKey()
    const first = await create(idempotencyKey, { type: 'token', data: 'across a rotation' })
    const onVersion = async (version: number) => (await keys.status()).tenants[0].versions.find((entry) => entry.version === version)!.objects.idempotent_responses
    const sealedOnOne = await onVersion(1)
    expect(sealedOnOne).toBeGreaterThanOrEqual(1)
    await keys.rotate(actor, service.tenantId)
    await expect(keys.retire(actor, service.tenantId, 1)).rejects.toMatchObject({ status: 409, message: expect.stringContaining('stored idempotent response') })
    while ((await keys.reencrypt(500)) > 0);
    expect(await onVersion(2)).toBe(sealedOnOne)
    const report = await keys.retire(actor, service.tenantId, 1)
    expect(report.counts_after.idempotent_responses).toEqual({ 1: 0, 2: sealedOnOne })
    const retry = await create(idempotencyKey, { type: 'token', data: 'across a rotation' })
    expect(retry.body).toEqual(first.body)
  })

  it.skipIf(onPostgres)('stores responses sealed: a revealed value is not in the database file or its WAL', async () => {
    const secret = 'idempotent-secret-value-7391'
    const created = await create(newKey(), { type: 'token', data: secret })
    expect(created.body.data).toBe(secret)
    // The token itself is sealed too: only the stored response could leak the value.
    for (const name of await readdir(service.dataDir)) {
      if (!name.startsWith('tessera.db')) continue
      expect((await readFile(join(service.dataDir, name))).includes(secret)).toBe(false)
    }
  })
})
