/**
 * BT-IDEMPOTENCY-KEY when the service stops between a request's commit and
 * storing its response (kill -9, a crash): the key stays reserved without a
 * response, and once the reservation counts as abandoned (15 minutes) a retry
 * must not run the request a second time. It is a 409 saying the request was
 * carried out and its response lost. A request that changed nothing before
 * its service stopped runs again. Runs on both engines.
 *
 * The crash window is reproduced deterministically: a trigger makes every
 * transaction storing a response fail, as if the service had died just after
 * the request's own transaction committed.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sql } from '../../../src/main/storage/connections'
import { onPostgres } from '../../helpers/postgres'
import { startTestService, type TestService } from '../../helpers/service'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']
const APP = { name: 'Checkout', type: 'private', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: CRUD }] }
const LOST = /carried out.*response was lost/s

const LOSE_RESPONSES = onPostgres
  ? [
      `CREATE FUNCTION test_lose_response() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the service stopped before keeping the response'; END $$`,
      'CREATE TRIGGER test_lose_response BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION test_lose_response()'
    ]
  : [`CREATE TRIGGER test_lose_response BEFORE UPDATE ON idempotency_keys BEGIN SELECT RAISE(ABORT, 'the service stopped before keeping the response'); END`]
const KEEP_RESPONSES = onPostgres ? ['DROP TRIGGER test_lose_response ON idempotency_keys', 'DROP FUNCTION test_lose_response()'] : ['DROP TRIGGER test_lose_response']

describe('BT-IDEMPOTENCY-KEY after a crash between commit and stored response', () => {
  let service: TestService
  let key: string
  let keyCount = 0

  beforeAll(async () => {
    service = await startTestService()
    key = (await service.createApplication(APP)).key
  })
  afterAll(() => service.stop())

  const newKey = () => `lost-${++keyCount}`
  /** Sent with fetch: a response whose storing failed answers 500, which the OpenAPI document need not list. */
  async function send(method: string, path: string, idempotencyKey: string, body?: unknown): Promise<{ status: number; type: string; body: any }> {
    const response = await fetch(service.url + path, {
      method,
      headers: {
        'SVC-API-KEY': key,
        'BT-IDEMPOTENCY-KEY': idempotencyKey,
        ...(body === undefined ? {} : { 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' })
      },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await response.text()
    return { status: response.status, type: response.headers.get('content-type') ?? '', body: text ? JSON.parse(text) : undefined }
  }
  const tokenCount = async () => (await service.request('GET', '/tokens?size=1', { key })).body.pagination.total_items as number
  const entries = async (entityId: string, operation: string) =>
    ((await service.request('GET', `/logs?entity_id=${encodeURIComponent(entityId)}&size=100`)).body.data as Array<{ operation: string }>).filter((entry) => entry.operation === operation).length
  const tokensOfOrder = async (order: string) => (await service.request('GET', `/tokens?metadata.order=${order}&size=100`, { key })).body.data as Array<{ id: string }>

  /** Runs `work` while no response can be stored: each request's change commits, and its service "dies" before keeping the response. */
  async function losingResponses<T>(work: () => Promise<T>): Promise<T> {
    const writes = service.host.vault.services.context.writes
    await writes.run(async (trx) => {
      for (const statement of LOSE_RESPONSES) await sql(trx).raw(statement)
    })
    try {
      return await work()
    } finally {
      await writes.run(async (trx) => {
        for (const statement of KEEP_RESPONSES) await sql(trx).raw(statement)
      })
    }
  }

  it('does not make a token again for a create whose token was made but whose response was lost: the retry is a 409 saying so', async () => {
    const idempotencyKey = newKey()
    const body = { type: 'token', data: 'made once', metadata: { order: 'A-1' } }
    const tokens = await tokenCount()
    const first = await losingResponses(() => send('POST', '/tokens', idempotencyKey, body))
    expect(first.status).toBe(500)
    expect(await tokenCount()).toBe(tokens + 1)

    // The reservation may still belong to a request running elsewhere: "still running" for 15 minutes.
    const early = await send('POST', '/tokens', idempotencyKey, body)
    expect(early.status).toBe(409)
    expect(early.body.detail).toContain('still running')

    service.clock.advance(16 * MINUTE)
    const retry = await send('POST', '/tokens', idempotencyKey, body)
    expect(retry.status).toBe(409)
    expect(retry.type).toContain('application/problem+json')
    expect(retry.body.detail).toMatch(LOST)
    expect(retry.body.detail).toContain('BT-IDEMPOTENCY-KEY')
    // Asked again, the same answer: the key never runs the request a second time.
    expect((await send('POST', '/tokens', idempotencyKey, body)).status).toBe(409)
    const made = await tokensOfOrder('A-1')
    expect(made).toHaveLength(1)
    expect(await entries(made[0].id, 'create')).toBe(1)

    // Another request under the key is the usual 422.
    const other = await send('POST', '/tokens', idempotencyKey, { type: 'token', data: 'something else' })
    expect(other.status).toBe(422)
    expect(other.body.errors).toEqual({ 'BT-IDEMPOTENCY-KEY': [expect.any(String)] })
    expect(await tokenCount()).toBe(tokens + 1)
  })

  it('answers so for every write a group commit carried out together: creates, a tokenize, an update and a delete', async () => {
    const updated = (await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'before' } })).body.id as string
    const deleted = (await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'to delete' } })).body.id as string
    const requests: Array<[string, string, unknown]> = [
      ...Array.from({ length: 24 }, (_, n): [string, string, unknown] => ['POST', '/tokens', { type: 'token', data: `burst ${n}` }]),
      ['POST', '/tokenize', ['one', 'two', { type: 'token', data: 'three' }]],
      ['PATCH', `/tokens/${updated}`, { metadata: { patched: 'once' } }],
      ['DELETE', `/tokens/${deleted}`, undefined]
    ]
    const keys = requests.map(() => newKey())
    const tokens = await tokenCount()
    const answers = await losingResponses(() => Promise.all(requests.map(([method, path, body], index) => send(method, path, keys[index], body))))
    expect(answers.map((answer) => answer.status)).toEqual(requests.map(() => 500))
    // 24 creates and 3 tokenized, one deleted.
    expect(await tokenCount()).toBe(tokens + 24 + 3 - 1)

    service.clock.advance(16 * MINUTE)
    const retries = await Promise.all(requests.map(([method, path, body], index) => send(method, path, keys[index], body)))
    expect(retries.map((retry) => retry.status)).toEqual(requests.map(() => 409))
    for (const retry of retries) expect(retry.body.detail).toMatch(LOST)
    expect(await tokenCount()).toBe(tokens + 24 + 3 - 1)
    expect(await entries(updated, 'update')).toBe(1)
    expect(await entries(deleted, 'delete')).toBe(1)
  })

  it('runs again a request whose service stopped before it changed anything, once its reservation counts as abandoned', async () => {
    const idempotencyKey = newKey()
    const body = JSON.stringify({ type: 'token', data: 'never made by the first' })
    const tokens = await tokenCount()
    // The first request sends its headers and half its body, then its service "stops": it holds the key, and changed nothing.
    const first = httpRequest(`${service.url}/tokens`, {
      method: 'POST',
      headers: { 'SVC-API-KEY': key, 'BT-IDEMPOTENCY-KEY': idempotencyKey, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }
    })
    const firstEnded = new Promise<void>((resolve) => {
      first.on('error', () => resolve())
      first.on('response', (response) => {
        response.resume()
        resolve()
      })
    })
    first.write(body.slice(0, 10))
    const reserved = () => sql(service.host.vault.services.context.reader)('idempotency_keys').where('idempotency_key', idempotencyKey).first()
    await vi.waitFor(async () => expect(await reserved()).toBeDefined())

    expect((await send('POST', '/tokens', idempotencyKey, JSON.parse(body))).status).toBe(409)
    service.clock.advance(16 * MINUTE)
    const retry = await send('POST', '/tokens', idempotencyKey, JSON.parse(body))
    expect(retry.status).toBe(201)
    expect(retry.body.data).toBe('never made by the first')
    first.destroy()
    await firstEnded
    expect(await tokenCount()).toBe(tokens + 1)
    // And it was kept as any response is: the next retry replays it.
    expect((await send('POST', '/tokens', idempotencyKey, JSON.parse(body))).body.id).toBe(retry.body.id)
  })

  it('records nothing for a request without a key, nor for one that fails: its key is free for a corrected retry', async () => {
    const commits = async () => Number(((await sql(service.host.vault.services.context.reader)('idempotency_commits').count({ n: '*' }).first()) as { n: number | string }).n)
    const before = await commits()
    expect((await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'no key' } })).status).toBe(201)
    const idempotencyKey = newKey()
    expect((await send('POST', '/tokens', idempotencyKey, { type: 'card', data: { number: '4242424242424241' } })).status).toBe(400)
    expect(await commits()).toBe(before)
    expect((await send('POST', '/tokens', idempotencyKey, { type: 'token', data: 'corrected' })).status).toBe(201)
    expect(await commits()).toBe(before + 1)
  })

  it('frees the key after 24 hours as any other: the request then runs afresh, and the sweep forgets what it kept', async () => {
    const idempotencyKey = newKey()
    const body = { type: 'token', data: 'a day later' }
    expect((await losingResponses(() => send('POST', '/tokens', idempotencyKey, body))).status).toBe(500)
    service.clock.advance(16 * MINUTE)
    expect((await send('POST', '/tokens', idempotencyKey, body)).status).toBe(409)
    service.clock.advance(24 * HOUR)
    const later = await send('POST', '/tokens', idempotencyKey, body)
    expect(later.status).toBe(201)

    service.clock.advance(24 * HOUR)
    const swept = (await service.host.vault.services.jobs.runDueJobs()).find((result) => result.name === 'expire-idempotency-keys')
    expect(swept?.error).toBeUndefined()
    const reader = sql(service.host.vault.services.context.reader)
    const rows = async (table: string) => Number(((await reader(table).count({ n: '*' }).first()) as { n: number | string }).n)
    expect(await rows('idempotency_keys')).toBe(0)
    expect(await rows('idempotency_commits')).toBe(0)
  })
})
