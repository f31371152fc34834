import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { TOKENIZE_MAX_TOKENS } from '../../../src/shared/token-rules'
import type { WriteQueue } from '../../../src/main/storage/write-queue'
import { startTestService, type TestService } from '../../helpers/service'
import { breakLuhn, cardNumber } from '../../helpers/tokens'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']
const CARD_MASK = {
  number: '{{ data.number | reveal_last: 4 }}',
  expiration_month: '{{ data.expiration_month }}',
  expiration_year: '{{ data.expiration_year }}'
}

type Body = Record<string, any>
type App = { id: string; key: string }

const rule = (priority: number, container: string, transform: string, permissions: string[] = CRUD) => ({ priority, container, transform, permissions })
const masked = (number: string) => 'X'.repeat(number.length - 4) + number.slice(-4)
const card = (extra: Body = {}) => ({ number: cardNumber(), expiration_month: 12, expiration_year: 2030, ...extra })

/** Calls `seen` as each unit reaches the write queue's `append`, which then goes on as usual; returns the spy to restore. */
function watchAppends(writes: WriteQueue, seen: () => void) {
  const append = writes.append.bind(writes)
  return vi.spyOn(writes, 'append').mockImplementation((...args) => (seen(), append(...args)))
}

/** A fresh vault with a revealing and a masking application. */
async function startVault(options: { bodyLimitBytes?: number } = {}) {
  const service = await startTestService(options)
  const revealer = await service.createApplication({ name: 'Revealer', type: 'private', rules: [rule(1, '/', 'reveal')] })
  const masker = await service.createApplication({ name: 'Masker', type: 'private', permissions: CRUD })
  return { service, revealer, masker }
}

describe('POST /tokenize', () => {
  let service: TestService
  let revealer: App
  let masker: App
  /** token:create on /pci/ only. */
  let pciCreator: App

  beforeAll(async () => {
    ;({ service, revealer, masker } = await startVault())
    pciCreator = await service.createApplication({ name: 'PCI', type: 'private', rules: [rule(1, '/pci/', 'mask', ['token:create'])] })
  })
  afterAll(() => service.stop())

  function tokenize(body: unknown, key = revealer.key) {
    return service.request('POST', '/tokenize', { key, body })
  }

  /** Tokenizes `body`, expecting 200, and returns the response body. */
  async function ok(body: unknown, key = revealer.key): Promise<any> {
    const response = await tokenize(body, key)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.headers.get('content-type')).toContain('application/json')
    return response.body
  }

  async function read(id: string) {
    const response = await service.request('GET', `/tokens/${encodeURIComponent(id)}`, { key: revealer.key })
    return response
  }

  it('replaces a plain string with the id of a new generic token', async () => {
    const id = await ok('my secret')
    expect(id).toMatch(UUID)
    const token = await read(id)
    expect(token.body).toMatchObject({ id, type: 'token', data: 'my secret', containers: ['/general/high/'], created_by: revealer.id })
  })

  it('replaces each plain value of an array with a distinct id', async () => {
    const values = ['alpha', 'beta', 'alpha']
    const ids: string[] = await ok(values)
    expect(ids).toHaveLength(3)
    expect(new Set(ids).size).toBe(3)
    for (const [index, id] of ids.entries()) expect((await read(id)).body.data).toBe(values[index])
  })

  it('turns numbers and booleans into tokens that keep their JSON type, and keeps null', async () => {
    const [num, yes, no, nothing] = await ok([42.5, true, false, null])
    expect(nothing).toBeNull()
    expect((await read(num)).body.data).toBe(42.5)
    expect((await read(yes)).body.data).toBe(true)
    expect((await read(no)).body.data).toBe(false)
  })

  it('answers a top-level null, empty array and empty object in kind', async () => {
    expect(await ok(null)).toBeNull()
    expect(await ok([])).toEqual([])
    expect(await ok({})).toEqual({})
  })

  it('replaces token requests with token objects showing masked card values in data', async () => {
    const data = card({ cvc: '123' })
    const [cardToken, generic] = await ok([{ type: 'card', data }, { type: 'token', data: 'x', metadata: { a: 'b' } }], masker.key)
    expect(cardToken).toMatchObject({
      id: expect.stringMatching(UUID),
      tenant_id: service.tenantId,
      type: 'card',
      data: { number: masked(data.number), expiration_month: 12, expiration_year: 2030 },
      mask: CARD_MASK,
      containers: ['/pci/high/'],
      fingerprint_expression: '{{ data.number }}',
      created_by: masker.id
    })
    expect(JSON.stringify(cardToken)).not.toContain(data.number)
    expect(generic).toMatchObject({ type: 'token', metadata: { a: 'b' }, containers: ['/general/high/'] })
    expect(generic).not.toHaveProperty('data')
    expect((await read(cardToken.id)).body.data).toEqual(data)
  })

  it('returns the plaintext of token requests to a revealing caller', async () => {
    const data = card()
    const [token] = await ok([{ type: 'card', data }])
    expect(token.data).toEqual(data)
  })

  it('accepts a single token request as the whole body', async () => {
    const token = await ok({ type: 'bank', data: { routing_number: '021000021', account_number: '000123456789' } }, masker.key)
    expect(token).toMatchObject({ type: 'bank', data: { routing_number: '021000021', account_number: 'XXXXXXXX6789' } })
  })

  it('honours the create fields of token requests: id, containers, expires_at, search_indexes', async () => {
    const id = `tk-${randomUUID()}`
    const [token] = await ok([
      { id, type: 'token', data: 'x', containers: ['/custom/'], expires_at: '1/2/2030', search_indexes: ['{{ data }}'], fingerprint_expression: '{{ data }}' }
    ])
    expect(token).toMatchObject({ id, containers: ['/custom/'], expires_at: '2030-01-02T00:00:00.000Z', search_indexes: ['{{ data }}'], fingerprint_expression: '{{ data }}' })
  })

  it('keeps the shape of nested composite objects and arrays', async () => {
    const data = card()
    const result = await ok({
      customer: {
        name: 'Ada Lovelace',
        card: { type: 'card', data },
        phones: ['555-1234', { type: 'token', data: '555-9876' }],
        address: { lines: [['1 Main St']] }
      },
      count: 3,
      active: true,
      note: null
    })
    expect(result).toEqual({
      customer: {
        name: expect.stringMatching(UUID),
        card: expect.objectContaining({ type: 'card', data }),
        phones: [expect.stringMatching(UUID), expect.objectContaining({ type: 'token', data: '555-9876' })],
        address: { lines: [[expect.stringMatching(UUID)]] }
      },
      count: expect.stringMatching(UUID),
      active: expect.stringMatching(UUID),
      note: null
    })
    expect((await read(result.customer.name)).body.data).toBe('Ada Lovelace')
    expect((await read(result.customer.address.lines[0][0])).body.data).toBe('1 Main St')
    expect((await read(result.count)).body.data).toBe(3)
  })

  it('stores the data of a token request whole, without walking into it', async () => {
    const data = { list: ['a', 'b'], nested: { type: 'card', data: 'not a request' } }
    const [token] = await ok([{ type: 'token', data }])
    expect(token.data).toEqual(data)
  })

  it('treats an object with type but no data as a composite', async () => {
    const result = await ok({ type: 'card' })
    expect(result).toEqual({ type: expect.stringMatching(UUID) })
  })

  it('creates 1,000 plain values in one request', async () => {
    const values = Array.from({ length: 1000 }, (_, index) => `value-${index}`)
    const ids: string[] = await ok(values)
    expect(ids).toHaveLength(1000)
    expect(new Set(ids).size).toBe(1000)
    expect((await read(ids[0])).body.data).toBe('value-0')
    expect((await read(ids[999])).body.data).toBe('value-999')
    const listed = await service.request('GET', `/tokens?${ids.slice(0, 50).map((id) => `id=${id}`).join('&')}&size=100`, { key: revealer.key })
    expect(listed.body.pagination.total_items).toBe(50)
  })

  it('gives way to other work in slices while it seals a thousand tokens, without any expression', async () => {
    const { services, owner } = service.host.vault
    let turns = 0
    let turnsBeforeWrite: number | undefined
    const spy = watchAppends(services.context.writes, () => (turnsBeforeWrite ??= turns))
    let counting = true
    const ticking = (async () => {
      for (; counting; turns++) await new Promise((resolve) => setImmediate(resolve))
    })()
    try {
      const started = turns
      await services.tokenize.run(owner, Array.from({ length: TOKENIZE_MAX_TOKENS }, (_, i) => `slice-${i}`))
      // Sealed in one go, the tokens would reach the write queue in the turn the request began.
      expect(turnsBeforeWrite! - started).toBeGreaterThanOrEqual(2)
    } finally {
      counting = false
      spy.mockRestore()
      await ticking
    }
  })

  it('commits a read queued behind bulk tokenize requests before them, not after every one', async () => {
    const { services, owner } = service.host.vault
    const writes = services.context.writes
    const { id } = (await services.tokens.create(owner, { type: 'token', data: 'read while bulk requests wait' })).token
    let releaseWriter!: () => void
    const writerHeld = writes.run(() => new Promise<void>((resolve) => (releaseWriter = resolve)))
    let appended = 0
    const spy = watchAppends(writes, () => appended++)
    const settled: string[] = []
    try {
      const bulk = Array.from({ length: 6 }, (_, n) =>
        services.tokenize.run(owner, Array.from({ length: TOKENIZE_MAX_TOKENS }, (_, i) => `queued-${n}-${i}`)).then(() => settled.push(`bulk ${n}`))
      )
      await vi.waitFor(() => expect(appended).toBe(6))
      const reading = services.tokens.get(owner, id).then(() => settled.push('read'))
      await vi.waitFor(() => expect(appended).toBe(7))
      releaseWriter()
      await Promise.all([writerHeld, reading, ...bulk])
      // First in, first out, the read's audit entry would commit after all 6,000 tokens.
      expect(settled[0]).toBe('read')
      expect(settled).toHaveLength(7)
    } finally {
      spy.mockRestore()
      releaseWriter()
    }
  })

  it('answers two token requests with the same literal id with 409 and creates nothing', async () => {
    const id = `twice-${randomUUID()}`
    const other = `other-${randomUUID()}`
    const response = await tokenize([{ id: other, type: 'token', data: 'a' }, { id, type: 'token', data: 'b' }, { id, type: 'token', data: 'c' }])
    expect(response.status).toBe(409)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    expect((await read(id)).status).toBe(404)
    expect((await read(other)).status).toBe(404)
  })

  it('answers a literal id that already exists with 409 and creates nothing', async () => {
    const id = `exists-${randomUUID()}`
    const other = `other-${randomUUID()}`
    await ok([{ id, type: 'token', data: 'first' }])
    const response = await tokenize([{ id: other, type: 'token', data: 'a' }, { id, type: 'token', data: 'second' }])
    expect(response.status).toBe(409)
    expect((await read(other)).status).toBe(404)
    expect((await read(id)).body.data).toBe('first')
  })

  it('keeps a conflicting request from taking concurrent neighbours down, and creates nothing of it', async () => {
    const taken = `taken-${randomUUID()}`
    await ok([{ id: taken, type: 'token', data: 'first' }])
    const loserId = `loser-${randomUUID()}`
    const [before, loser, after] = await Promise.all([
      tokenize(['a', { type: 'card', data: card() }]),
      tokenize([{ id: loserId, type: 'token', data: 'x' }, { id: taken, type: 'token', data: 'again' }]),
      tokenize({ b: 'b' })
    ])
    expect([before.status, loser.status, after.status]).toEqual([200, 409, 200])
    expect((await read(before.body[0])).body.data).toBe('a')
    expect((await read(after.body.b)).body.data).toBe('b')
    expect((await read(loserId)).status).toBe(404)
  })

  it('returns the existing token for a deduplicating request, shaped like the other tokenize results', async () => {
    const data = card()
    const [original] = await ok([{ type: 'card', data }], masker.key)
    const [again, fresh] = await ok([{ type: 'card', data, deduplicate_token: true }, { type: 'card', data: card() }], masker.key)
    expect(again).toEqual(original)
    expect(again.mask).toEqual(fresh.mask)
  })

  it('deduplicates two equal requests within one body', async () => {
    const data = card()
    const [first, second] = await ok([
      { type: 'card', data, deduplicate_token: true },
      { type: 'card', data, deduplicate_token: true }
    ])
    expect(second.id).toBe(first.id)
  })

  it('deduplicates each request of a body against the vault and the earlier requests of the body, and only those that ask', async () => {
    const [stored, other] = [card(), card()]
    const [original] = await ok([{ type: 'card', data: stored }], masker.key)
    const [again, fresh, freshAgain, notAsked, storedAgain] = await ok(
      [
        { type: 'card', data: stored, deduplicate_token: true },
        { type: 'card', data: other, deduplicate_token: true },
        { type: 'card', data: other, deduplicate_token: true },
        { type: 'card', data: stored },
        { type: 'card', data: stored, deduplicate_token: true }
      ],
      masker.key
    )
    expect(again).toEqual(original)
    expect(storedAgain).toEqual(original)
    expect(freshAgain.id).toBe(fresh.id)
    expect(new Set([original.id, fresh.id, notAsked.id]).size).toBe(3)
  })

  it('checks token:create on each destination container', async () => {
    const [token] = await ok([{ type: 'card', data: card() }], pciCreator.key)
    expect(token.type).toBe('card')
    const id = `pci-${randomUUID()}`
    const mixed = await tokenize([{ id, type: 'card', data: card() }, 'plain goes to /general/high/'], pciCreator.key)
    expect(mixed.status).toBe(403)
    expect(mixed.headers.get('content-type')).toContain('application/problem+json')
    expect((await read(id)).status).toBe(404)
    const moved = await tokenize({ a: { type: 'card', data: card(), containers: ['/general/'] } }, pciCreator.key)
    expect(moved.status).toBe(403)
  })

  it('rejects a caller without token:create with 403', async () => {
    const reader = await service.createApplication({ name: 'Reader', type: 'private', permissions: ['token:read'] })
    expect((await tokenize(['x'], reader.key)).status).toBe(403)
    expect((await tokenize(['x'], service.adminKey)).status).toBe(403)
  })

  it('names the path of a bad nested element', async () => {
    const response = await tokenize({ customer: { name: 'x', card: { type: 'card', data: { number: breakLuhn(cardNumber()) } } } })
    expect(response.status).toBe(400)
    expect(Object.keys(response.body.errors)).toEqual(['customer.card.data.number'])
  })

  it('names every bad element at once', async () => {
    const response = await tokenize([
      { type: 'card', data: { number: '1' } },
      'fine',
      { type: 'nope', data: 1 },
      { list: [{ type: 'token', data: 'x', colour: 'blue' }] },
      { type: 'token', data: 'x', id: 'a/b' },
      { type: 'token', data: 'x', toString: 1 }
    ])
    expect(response.status).toBe(400)
    expect(Object.keys(response.body.errors).sort()).toEqual(['[0].data.number', '[2].type', '[3].list[0].colour', '[4].id', '[5].toString'])
  })

  it('refuses composites nested more than 32 levels deep with 400', async () => {
    let body: unknown = 'deep'
    for (let i = 0; i < 40; i++) body = [body]
    const response = await tokenize(body)
    expect(response.status).toBe(400)
  })

  it('writes one create log entry per token with the acting application', async () => {
    const [id, token] = await ok(['logged', { type: 'card', data: card() }], masker.key)
    for (const [entityId, entityType] of [
      [id, 'token'],
      [token.id, 'card']
    ]) {
      const logs = await service.request('GET', `/logs?entity_id=${entityId}`)
      expect(logs.body.data).toEqual([
        expect.objectContaining({ entity_type: entityType, operation: 'create', actor_id: masker.id, actor_type: 'application' })
      ])
    }
  })

  it('rejects malformed JSON with 400, an empty body with 400 and a non-JSON body with 415', async () => {
    const malformed = await service.request('POST', '/tokenize', { key: revealer.key, rawBody: '["a", ' })
    expect(malformed.status).toBe(400)
    expect(malformed.headers.get('content-type')).toContain('application/problem+json')
    expect((await service.request('POST', '/tokenize', { key: revealer.key })).status).toBe(400)
    const text = await service.request('POST', '/tokenize', { key: revealer.key, rawBody: 'secret', contentType: 'text/plain' })
    expect(text.status).toBe(415)
  })

  it('refuses a number JSON cannot carry exactly (out of range, or an integer past 2^53 - 1), naming it, and creates nothing', async () => {
    const inexact = 'must be a finite number within ±9007199254740991; send larger numbers as strings'
    const cases: [string, string][] = [
      ['[1e400]', '[0]'],
      ['{"type":"token","data":1e400}', 'data'],
      ['{"type":"token","data":{"a":-1e400}}', 'data.a'],
      ['{"type":"token","data":12345678901234567890123}', 'data'],
      ['{"n":{"type":"token","data":[1,{"b":9007199254740993}]}}', 'n.data[1].b']
    ]
    const before = (await service.request('GET', '/tokens?size=1', { key: revealer.key })).body.pagination.total_items
    for (const [rawBody, field] of cases) {
      const response = await service.request('POST', '/tokenize', { key: revealer.key, rawBody })
      expect([response.status, response.body.errors]).toEqual([400, { [field]: [inexact] }])
    }
    expect((await service.request('GET', '/tokens?size=1', { key: revealer.key })).body.pagination.total_items).toBe(before)
    expect(await ok([9007199254740991, -9007199254740991, 1.5e300 / 1e300, 1e-300])).toHaveLength(4)
  })

  it('rejects a caller without an API key with 401', async () => {
    expect((await service.request('POST', '/tokenize', { key: null, body: ['x'] })).status).toBe(401)
  })
})

describe('POST /tokenize atomicity', () => {
  let service: TestService
  let revealer: App

  beforeAll(async () => {
    ;({ service, revealer } = await startVault({ bodyLimitBytes: 64 * 1024 }))
  })
  afterAll(() => service.stop())

  /** Token-entity log entries and visible tokens: both must stay at zero. */
  async function expectNothingCreated() {
    const tokens = await service.request('GET', '/tokens', { key: revealer.key })
    expect(tokens.body).toMatchObject({ data: [], pagination: { total_items: 0 } })
    for (const type of ['token', 'card', 'bank']) {
      const logs = await service.request('GET', `/logs?entity_type=${type}`)
      expect(logs.body.pagination.total_items, type).toBe(0)
    }
  }

  it('creates nothing when the fourth element is a card failing the Luhn check, and names [3].data.number', async () => {
    const response = await service.request('POST', '/tokenize', {
      key: revealer.key,
      body: ['ok', { type: 'token', data: 'ok' }, { type: 'card', data: card() }, { type: 'card', data: { number: '4242424242424241' } }]
    })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    expect(Object.keys(response.body.errors)).toEqual(['[3].data.number'])
    expect(JSON.stringify(response.body)).not.toContain('4242424242424241')
    await expectNothingCreated()
  })

  it('creates nothing when one destination container is forbidden', async () => {
    const pci = await service.createApplication({ name: 'PCI', type: 'private', rules: [rule(1, '/pci/', 'reveal', ['token:create'])] })
    const response = await service.request('POST', '/tokenize', { key: pci.key, body: [{ type: 'card', data: card() }, 'plain'] })
    expect(response.status).toBe(403)
    await expectNothingCreated()
  })

  it('creates nothing when a literal id is repeated', async () => {
    const response = await service.request('POST', '/tokenize', { key: revealer.key, body: ['a', { id: 'same', type: 'token', data: 1 }, { id: 'same', type: 'token', data: 2 }] })
    expect(response.status).toBe(409)
    await expectNothingCreated()
  })

  it('refuses more than 1,000 tokens in one request, nested ones counted, naming the body, and creates nothing', async () => {
    const values = Array.from({ length: TOKENIZE_MAX_TOKENS }, (_, i) => `value-${i}`)
    for (const body of [[...values, 'one more'], { values, card: { type: 'card', data: { number: cardNumber(), expiration_month: 12, expiration_year: 2035 } } }]) {
      const response = await service.request('POST', '/tokenize', { key: revealer.key, body })
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(Object.keys(response.body.errors)).toEqual(['(body)'])
      expect(response.body.errors['(body)'][0]).toContain(`at most ${TOKENIZE_MAX_TOKENS} tokens`)
    }
    await expectNothingCreated()
  })

  it('rejects a body over the limit with 413 and creates nothing', async () => {
    const response = await service.request('POST', '/tokenize', { key: revealer.key, body: Array.from({ length: 10_000 }, (_, i) => `value-${i}`) })
    expect(response.status).toBe(413)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    await expectNothingCreated()
  })
})
