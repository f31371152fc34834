/**
 * BT-IDEMPOTENCY-KEY over HTTP: a retry replays the first response (one token
 * made), a different request under the key is a 422, a request arriving while
 * the first runs a 409, keys are the caller's own, and responses are kept 24
 * hours, sealed. A replay hands out no more than the caller may see now: reads
 * run again, tokens are kept without their data, keys are not kept, and the
 * route's permission is checked again. Runs on both engines.
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
const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '987' }

/** What a replay keeps of a token: everything but its data and what is computed from it. */
function identityOf(token: Record<string, unknown>): Record<string, unknown> {
  const { data: _data, mask: _mask, metadata: _metadata, search_indexes: _indexes, fingerprint_expression: _expression, ...identity } = token
  return identity
}

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

  it('replays the first response to a retry: the same status, the token without its data, one token made', async () => {
    const before = await tokenCount()
    const idempotencyKey = newKey()
    const first = await create(idempotencyKey, { type: 'token', data: 'once only' })
    const retry = await create(idempotencyKey, { type: 'token', data: 'once only' })
    expect(first.status).toBe(201)
    expect(first.body.data).toBe('once only')
    expect(retry.status).toBe(201)
    expect(retry.body).toEqual(identityOf(first.body))
    expect(await tokenCount()).toBe(before + 1)
  })

  it('audits each replay', async () => {
    const idempotencyKey = newKey()
    await create(idempotencyKey, { type: 'token', data: 'audited' })
    await create(idempotencyKey, { type: 'token', data: 'audited' })
    const logs = (await service.request('GET', '/logs?entity_type=idempotency-key')).body.data as Array<Record<string, unknown>>
    expect(logs[0]).toMatchObject({ operation: 'read', message: 'Stored response (201) replayed for POST /tokens' })
  })

  it('audits a replay by its route, not the caller\'s path, however long that is', async () => {
    // 65 characters, 489 once percent-encoded in the path: longer than an audit message may be.
    const id = `order-abc123-${'注文番号'.repeat(13)}`
    expect((await service.request('POST', '/tokens', { key, body: { id, type: 'token', data: 'x' } })).status).toBe(201)
    const idempotencyKey = newKey()
    const remove = () => service.request('DELETE', `/tokens/${encodeURIComponent(id)}`, { key, headers: { 'BT-IDEMPOTENCY-KEY': idempotencyKey } })
    expect((await remove()).status).toBe(204)
    expect((await remove()).status).toBe(204)
    const logs = (await service.request('GET', '/logs?entity_type=idempotency-key')).body.data as Array<Record<string, unknown>>
    expect(logs[0]).toMatchObject({ operation: 'read', message: 'Stored response (204) replayed for DELETE /tokens/:id' })
  })

  it('replays text bodies and empty ones too: POST /tokenize and DELETE', async () => {
    const tokenizeKey = newKey()
    const tokenize = () => service.request('POST', '/tokenize', { key, body: { type: 'token', data: 'tokenized once' }, headers: { 'BT-IDEMPOTENCY-KEY': tokenizeKey } })
    const first = await tokenize()
    const retry = await tokenize()
    expect(retry.status).toBe(first.status)
    expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'))
    expect(retry.body).toEqual(identityOf(first.body))

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
    expect(retry.body).toEqual(identityOf(first.body))
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

  describe('a replay hands out no more than the caller may see now', () => {
    const narrow = (id: string, rules: unknown[]) => service.request('PUT', `/applications/${id}`, { body: { name: 'Narrowed', rules } })
    const detokenize = (as: string, id: string, idempotencyKey: string) =>
      service.request('POST', '/detokenize', { key: as, body: { card: `{{ ${id} }}` }, headers: { 'BT-IDEMPOTENCY-KEY': idempotencyKey } })
    const tokenReads = async (id: string) => ((await service.request('GET', `/logs?entity_id=${id}&size=100`)).body.data as Array<{ operation: string }>).filter((entry) => entry.operation === 'read').length

    async function revealingCard() {
      const app = await service.createApplication({ ...REVEALING_APP, name: 'Narrowed later' })
      const card = await service.request('POST', '/tokens', { key: app.key, body: { type: 'card', data: CARD } })
      return { app, id: card.body.id as string }
    }

    it('runs a detokenize again under its key, audited each time, and refuses it once the permission is narrowed', async () => {
      const { app, id } = await revealingCard()
      const idempotencyKey = newKey()
      expect((await detokenize(app.key, id, idempotencyKey)).body.card).toMatchObject({ number: CARD.number, cvc: CARD.cvc })
      const reads = await tokenReads(id)
      expect((await detokenize(app.key, id, idempotencyKey)).status).toBe(200)
      expect(await tokenReads(id)).toBe(reads + 1)

      await narrow(app.id, [{ priority: 1, container: '/', transform: 'mask', permissions: ['token:create'] }])
      const replay = await detokenize(app.key, id, idempotencyKey)
      expect(replay.status).toBe(403)
      expect(JSON.stringify(replay.body)).not.toContain(CARD.number)
    })

    it('answers a detokenize under its key for a deleted token as a new request: the token is gone', async () => {
      const { app, id } = await revealingCard()
      const idempotencyKey = newKey()
      expect((await detokenize(app.key, id, idempotencyKey)).status).toBe(200)
      expect((await service.request('DELETE', `/tokens/${id}`, { key: app.key })).status).toBe(204)
      const replay = await detokenize(app.key, id, idempotencyKey)
      expect(replay.status).toBe(400)
      expect(JSON.stringify(replay.body)).not.toContain(CARD.number)
    })

    it('runs a v2 search again under its key, and refuses it once the permission is narrowed', async () => {
      const app = await service.createApplication({ ...REVEALING_APP, name: 'Searcher', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: [...CRUD, 'token:search'] }] })
      await service.request('POST', '/tokens', { key: app.key, body: { type: 'card', data: CARD } })
      const search = () => service.request('POST', '/v2/tokens/search', { key: app.key, body: { query: 'type:card' }, headers: { 'BT-IDEMPOTENCY-KEY': 'search-1' } })
      expect((await search()).body.data[0].data.number).toBe(CARD.number)
      await narrow(app.id, [{ priority: 1, container: '/nothing/', transform: 'mask', permissions: ['token:create'] }])
      const replay = await search()
      expect(replay.status).toBe(403)
      expect(JSON.stringify(replay.body)).not.toContain(CARD.number)
    })

    it('keeps no token data: a created card replays without its number or CVC, also past the CVC retention window', async () => {
      const idempotencyKey = newKey()
      const send = () => create(idempotencyKey, { type: 'card', data: CARD })
      const first = await send()
      expect(first.body.data).toMatchObject({ number: CARD.number, cvc: CARD.cvc })
      service.clock.advance(2 * HOUR)
      await service.host.vault.services.jobs.runDueJobs()
      const replay = await send()
      expect(replay.status).toBe(201)
      expect(replay.body).toEqual(identityOf(first.body))
      expect(JSON.stringify(replay.body)).not.toMatch(/4242424242424242|"987"/)
    })

    it('checks the route’s permission again: a create replays only while the caller may still create there', async () => {
      const { app } = await revealingCard()
      const idempotencyKey = newKey()
      const send = () => create(idempotencyKey, { type: 'token', data: 'kept for a retry' }, app.key)
      expect((await send()).status).toBe(201)
      await narrow(app.id, [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:create', 'token:read'] }])
      const replay = await send()
      expect(replay.status).toBe(403)
      expect(replay.headers.get('content-type')).toContain('application/problem+json')
    })

    it('keeps no application key: a replayed create or new key is a 409 naming the application, without the key', async () => {
      const idempotencyKey = newKey()
      const send = () => service.request('POST', '/applications', { body: { name: 'Made once', type: 'private', permissions: ['token:create'] }, headers: { 'BT-IDEMPOTENCY-KEY': idempotencyKey } })
      const first = await send()
      expect(first.status).toBe(201)
      const replay = await send()
      expect(replay.status).toBe(409)
      expect(replay.headers.get('content-type')).toContain('application/problem+json')
      expect(replay.body.detail).toContain(first.body.id)
      expect(JSON.stringify(replay.body)).not.toContain(first.body.key)

      const keyKey = newKey()
      const addKey = () => service.request('POST', `/applications/${first.body.id}/keys`, { headers: { 'BT-IDEMPOTENCY-KEY': keyKey } })
      const added = await addKey()
      expect(added.status).toBe(201)
      const again = await addKey()
      expect(again.status).toBe(409)
      expect(JSON.stringify(again.body)).not.toContain(added.body.key)
      expect((await service.request('GET', `/applications/${first.body.id}/keys`)).body).toHaveLength(2)
    })
  })
})
