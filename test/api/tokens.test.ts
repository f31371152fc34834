import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'
import { breakLuhn, cardNumber, cardNumberEndingWith, MERGE_PATCH } from '../helpers/tokens'
import { sql } from '../../src/main/storage/connections'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const FINGERPRINT = /^[A-Za-z0-9]{1,100}$/
const HOUR = 60 * 60 * 1000
const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']
const ROUTING = '021000021'

type Body = Record<string, unknown>
type App = { id: string; key: string }

/** A rule on `container` granting `permissions` under `transform`. */
const rule = (priority: number, container: string, transform: string, permissions: string[] = CRUD) => ({ priority, container, transform, permissions })

const masked = (number: string) => 'X'.repeat(number.length - 4) + number.slice(-4)

describe('tokens', () => {
  let service: TestService
  /** Plain token:* permissions: the implicit transform masks. */
  let masker: App
  /** A rule on `/` that reveals. */
  let revealer: App
  /** A rule on `/` that redacts. */
  let redactor: App
  /** token:create only. */
  let creator: App
  /** token:read (reveal) and token:create (mask) on `/pci/` only. */
  let pciOnly: App

  beforeAll(async () => {
    service = await startTestService()
    masker = await service.createApplication({ name: 'Masker', type: 'private', permissions: CRUD })
    revealer = await service.createApplication({ name: 'Revealer', type: 'private', rules: [rule(1, '/', 'reveal')] })
    redactor = await service.createApplication({ name: 'Redactor', type: 'private', rules: [rule(1, '/', 'redact')] })
    creator = await service.createApplication({ name: 'Creator', type: 'private', permissions: ['token:create'] })
    pciOnly = await service.createApplication({
      name: 'PCI',
      type: 'private',
      rules: [rule(1, '/pci/', 'reveal', ['token:read']), rule(2, '/pci/', 'mask', ['token:create'])]
    })
  })
  afterAll(() => service.stop())

  const now = () => new Date(service.clock.now()).toISOString()
  const path = (id: string) => `/tokens/${encodeURIComponent(id)}`

  function post(body: unknown, key = revealer.key) {
    return service.request('POST', '/tokens', { key, body })
  }

  /** Creates a token (201 expected) and returns it. */
  async function create(body: Body, key = revealer.key): Promise<Body & { id: string }> {
    const response = await post(body, key)
    expect(response.status, JSON.stringify(response.body)).toBe(201)
    return response.body
  }

  function get(id: string, key = revealer.key) {
    return service.request('GET', path(id), { key })
  }

  function patch(id: string, body: unknown, key = revealer.key) {
    return service.request('PATCH', path(id), { key, body, contentType: MERGE_PATCH })
  }

  function list(query: string, key = revealer.key) {
    return service.request('GET', `/tokens?${query}`, { key })
  }

  async function logsOf(entityId: string) {
    const response = await service.request('GET', `/logs?entity_id=${encodeURIComponent(entityId)}&size=100`)
    expect(response.status).toBe(200)
    return response.body.data as Body[]
  }

  function card(extra: Body = {}) {
    return { number: cardNumber(), expiration_month: 12, expiration_year: 2030, ...extra }
  }

  describe('POST /tokens', () => {
    it('creates a generic token with a UUID id and the type defaults, 201', async () => {
      const response = await post({ type: 'token', data: 'a secret' }, masker.key)
      expect(response.status).toBe(201)
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        tenant_id: service.tenantId,
        type: 'token',
        fingerprint: expect.stringMatching(FINGERPRINT),
        containers: ['/general/high/'],
        metadata: {},
        fingerprint_expression: '{{ data | stringify }}',
        created_by: masker.id,
        created_at: now()
      })
    })

    it('refuses an id or metadata that would carry the token data in plaintext', async () => {
      const number = cardNumber()
      const byExpression = await post({ id: '{{ data.number }}', type: 'card', data: { number } }, masker.key)
      expect(byExpression.status).toBe(400)
      expect(Object.keys(byExpression.body.errors)).toEqual(['id'])
      const byLiteral = await post({ id: `card-${number}`, type: 'card', data: { number } }, masker.key)
      expect(byLiteral.status).toBe(400)
      const inMetadata = await post({ type: 'token', data: 'Ada Lovelace', metadata: { note: 'for Ada Lovelace' } }, masker.key)
      expect(inMetadata.status).toBe(400)
      expect(inMetadata.body.errors).toEqual({ 'metadata.note': ['must not contain the token data'] })
      const patched = await post({ type: 'token', data: 'Grace Hopper' }, masker.key)
      const leak = await service.request('PATCH', `/tokens/${patched.body.id}`, { key: masker.key, body: { metadata: { who: 'Grace Hopper' } }, contentType: MERGE_PATCH })
      expect(leak.status).toBe(400)
      expect(leak.body.errors).toHaveProperty(['metadata.who'])
      expect(JSON.stringify(byExpression.body)).not.toContain(number)
    })

    it('returns the plaintext to a caller whose create rule reveals', async () => {
      const data = { name: 'Ada', tags: ['x', 1, true, null] }
      const token = await create({ type: 'token', data })
      expect(token.data).toEqual(data)
    })

    it('accepts any JSON value as generic data', async () => {
      for (const data of [0, false, null, 'x', [1, [2]], { a: { b: {} } }]) {
        expect((await create({ type: 'token', data })).data).toEqual(data)
      }
    })

    it('accepts data nested 64 levels deep and refuses deeper data with 400', async () => {
      const nest = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)
      const ok = await service.request('POST', '/tokens', { key: revealer.key, rawBody: `{"type":"token","data":${nest(64)}}` })
      expect(ok.status).toBe(201)
      for (const levels of [65, 100_000]) {
        const response = await service.request('POST', '/tokens', { key: revealer.key, rawBody: `{"type":"token","data":${nest(levels)}}` })
        expect(response.status).toBe(400)
        expect(Object.keys(response.body.errors)).toEqual(['data'])
      }
    })

    it('returns no data to a caller whose create rule redacts', async () => {
      const token = await create({ type: 'card', data: card() }, redactor.key)
      expect(token).not.toHaveProperty('data')
      expect(token).not.toHaveProperty('mask')
    })

    it('shows a card as XXXXXXXXXXXX4242 in data and mask for a masking caller, with the card defaults', async () => {
      const response = await post({ type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' } }, masker.key)
      expect(response.status).toBe(201)
      const view = { number: 'XXXXXXXXXXXX4242', expiration_month: 12, expiration_year: 2030 }
      expect(response.body).toMatchObject({
        type: 'card',
        data: view,
        mask: view,
        containers: ['/pci/high/'],
        fingerprint_expression: '{{ data.number }}'
      })
      expect(JSON.stringify(response.body)).not.toContain('4242424242424242')
      expect(JSON.stringify(response.body)).not.toContain('"123"')
    })

    it('shows the plaintext in data and the masked values in mask for a revealing caller', async () => {
      const data = card({ cvc: '9876' })
      const token = await create({ type: 'card', data })
      expect(token.data).toEqual(data)
      expect(token.mask).toEqual({ number: masked(data.number), expiration_month: 12, expiration_year: 2030 })
    })

    it('leaves absent expiration fields out of a card mask', async () => {
      const number = cardNumber()
      const token = await create({ type: 'card', data: { number } }, masker.key)
      expect(token.mask).toEqual({ number: masked(number) })
      expect(token.data).toEqual({ number: masked(number) })
    })

    it.each([13, 15, 19])('accepts a card number of %i digits', async (length) => {
      const number = cardNumber(length)
      expect((await create({ type: 'card', data: { number } })).data).toEqual({ number })
    })

    it('accepts a card expiring this month and a four-digit cvc', async () => {
      await create({ type: 'card', data: card({ expiration_month: 11, expiration_year: 2026, cvc: '1234' }) })
    })

    it.each([
      ['a number failing the Luhn check', { number: breakLuhn(cardNumber()) }, 'data.number'],
      ['a 12-digit number', { number: cardNumber(12) }, 'data.number'],
      ['a 20-digit number', { number: cardNumber(20) }, 'data.number'],
      ['a number with spaces', { number: '4242 4242 4242 4242' }, 'data.number'],
      ['a number with dashes', { number: '4242-4242-4242-4242' }, 'data.number'],
      ['a numeric number', { number: 4242424242424242 }, 'data.number'],
      ['a missing number', { expiration_month: 1, expiration_year: 2030 }, 'data.number'],
      ['month 0', card({ expiration_month: 0 }), 'data.expiration_month'],
      ['month 13', card({ expiration_month: 13 }), 'data.expiration_month'],
      ['a month given as a string', card({ expiration_month: '12' }), 'data.expiration_month'],
      ['a fractional month', card({ expiration_month: 1.5 }), 'data.expiration_month'],
      ['a two-digit year', card({ expiration_year: 30 }), 'data.expiration_year'],
      ['a year given as a string', card({ expiration_year: '2030' }), 'data.expiration_year'],
      ['a past year', card({ expiration_year: 2025 }), 'data.expiration_year'],
      ['a past month of this year', card({ expiration_month: 10, expiration_year: 2026 }), 'data.expiration_month'],
      ['a two-digit cvc', card({ cvc: '12' }), 'data.cvc'],
      ['a five-digit cvc', card({ cvc: '12345' }), 'data.cvc'],
      ['a numeric cvc', card({ cvc: 123 }), 'data.cvc'],
      ['a cvc with letters', card({ cvc: '12a' }), 'data.cvc'],
      ['an unknown card field', card({ holder: 'Ada' }), 'data.holder'],
      ['card data that is a string', '4242424242424242', 'data'],
      ['card data that is an array', ['4242424242424242'], 'data'],
      ['card data that is null', null, 'data']
    ])('rejects a card with %s', async (_label, data, field) => {
      const response = await post({ type: 'card', data })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
      expect(JSON.stringify(response.body)).not.toMatch(/\d{12}/)
    })

    it('shows a bank account masked for a masking caller, with the bank defaults', async () => {
      const response = await post({ type: 'bank', data: { routing_number: ROUTING, account_number: '000123456789' } }, masker.key)
      expect(response.status).toBe(201)
      expect(response.body).toMatchObject({
        type: 'bank',
        data: { routing_number: ROUTING, account_number: 'XXXXXXXX6789' },
        containers: ['/bank/high/'],
        fingerprint_expression: '{{ data.account_number }}|{{ data.routing_number }}'
      })
      expect(JSON.stringify(response.body)).not.toContain('000123456789')
    })

    it.each(['1', '12345678901234567'])('accepts a bank account number of %s', async (account) => {
      await create({ type: 'bank', data: { routing_number: '011000015', account_number: account } })
    })

    it.each([
      ['a routing number failing the ABA checksum', { routing_number: '021000022', account_number: '123' }, 'data.routing_number'],
      ['an 8-digit routing number', { routing_number: '02100002', account_number: '123' }, 'data.routing_number'],
      ['a routing number with letters', { routing_number: '02100002a', account_number: '123' }, 'data.routing_number'],
      ['a numeric routing number', { routing_number: 21000021, account_number: '123' }, 'data.routing_number'],
      ['a missing routing number', { account_number: '123' }, 'data.routing_number'],
      ['an 18-digit account number', { routing_number: ROUTING, account_number: '123456789012345678' }, 'data.account_number'],
      ['an empty account number', { routing_number: ROUTING, account_number: '' }, 'data.account_number'],
      ['an account number with letters', { routing_number: ROUTING, account_number: '12a' }, 'data.account_number'],
      ['a numeric account number', { routing_number: ROUTING, account_number: 123 }, 'data.account_number'],
      ['a missing account number', { routing_number: ROUTING }, 'data.account_number'],
      ['an unknown bank field', { routing_number: ROUTING, account_number: '1', iban: 'x' }, 'data.iban'],
      ['bank data that is a string', '021000021', 'data']
    ])('rejects a bank account with %s', async (_label, data, field) => {
      const response = await post({ type: 'bank', data })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('applies a custom mask expression for a masking caller and returns the expression in mask', async () => {
      const mask = '{{ data | reveal_last: 4 }}'
      const token = await create({ type: 'token', data: 'hello-world-1234', mask }, masker.key)
      expect(token.data).toBe('XXXXXXXXXXXX1234')
      expect(token.mask).toBe(mask)
    })

    it('applies an object mask leaf by leaf', async () => {
      const mask = { first: '{{ data.first | reveal_last: 1 }}', fixed: 7 }
      const token = await create({ type: 'token', data: { first: 'Grace', last: 'Hopper' }, mask }, masker.key)
      expect(token.data).toEqual({ first: 'XXXXe', fixed: 7 })
    })

    it.each([
      ['an unknown filter', '{{ data | nope }}', 'mask'],
      ['bad syntax', '{{ data ', 'mask'],
      ['a filter with a wrong argument', '{{ data | reveal_last: "x" }}', 'mask'],
      ['a bad leaf in an object mask', { ok: '{{ data }}', bad: '{{ data | nope }}' }, 'mask.bad']
    ])('rejects a mask with %s', async (_label, mask, field) => {
      const response = await post({ type: 'token', data: 'x', mask })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('rejects a mask that cannot be evaluated on the data', async () => {
      const response = await post({ type: 'token', data: 'not a number', mask: '{{ data | to_number }}' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['mask'])
      const byCard = await post({ type: 'card', data: card(), mask: { number: '{{ data.number | reveal: 6, 4 }}', month: '{{ data.expiration_month | card_mask }}' } })
      expect(byCard.status).toBe(400)
      expect(Object.keys(byCard.body.errors)).toEqual(['mask.month'])
    })

    it('uses a literal id', async () => {
      const id = `customer-${randomUUID()}`
      const token = await create({ id, type: 'token', data: 'x' })
      expect(token.id).toBe(id)
      expect((await get(id)).body.id).toBe(id)
    })

    it('evaluates an id expression against the data', async () => {
      const token = await create({ id: '{{ data | alias_preserve_format }}', type: 'token', data: 'order-8731-' + randomUUID() })
      expect(token.id).toMatch(/^[a-z]{5}-\d{4}-[0-9a-z]{8}-/)
      expect((await get(token.id)).body.data).toBe(token.data)
    })

    it('evaluates an id expression mixing text and outputs', async () => {
      const number = cardNumber()
      const token = await create({ id: 'card-{{ data.number | alias_card }}-' + randomUUID(), type: 'card', data: card({ number }) })
      expect(token.id).toMatch(/^card-4\d{15}-/)
      expect(token.id).not.toContain(number)
    })

    it('rejects an id expression that yields fewer than 3 characters', async () => {
      const response = await post({ id: '{{ data | alias_preserve_length }}', type: 'token', data: 'ab' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['id'])
    })

    it('rejects an id expression that yields an object or null', async () => {
      expect((await post({ id: '{{ (1..3) }}', type: 'token', data: { a: 1 } })).status).toBe(400)
      expect((await post({ id: '{{ data.nope | alias_preserve_length }}', type: 'token', data: { a: 1 } })).status).toBe(400)
    })

    it('rejects an invalid id expression', async () => {
      const response = await post({ id: '{{ data | nope }}', type: 'token', data: 'abcdef' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['id'])
    })

    it.each([...'#/\\+?[]|&=%<>{}^'])('rejects an id containing %s', async (char) => {
      const response = await post({ id: `abc${char}def`, type: 'token', data: 'x' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['id'])
    })

    it('rejects an id expression whose value contains a forbidden character', async () => {
      const response = await post({ id: '{{ data | alias_preserve_format }}', type: 'token', data: 'a/b/c' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['id'])
    })

    it('accepts ids of 3 and 400 characters and refuses 2 and 401', async () => {
      const base = randomUUID().replace(/-/g, '')
      expect((await post({ id: base.slice(0, 3), type: 'token', data: 'x' })).status).toBe(201)
      expect((await post({ id: base.padEnd(400, 'z'), type: 'token', data: 'x' })).status).toBe(201)
      expect((await post({ id: base.slice(0, 2), type: 'token', data: 'x' })).status).toBe(400)
      expect((await post({ id: base.padEnd(401, 'z'), type: 'token', data: 'x' })).status).toBe(400)
    })

    it('answers a duplicate id with 409 and keeps the first token', async () => {
      const id = `dup-${randomUUID()}`
      await create({ id, type: 'token', data: 'first' })
      const response = await post({ id, type: 'token', data: 'second' })
      expect(response.status).toBe(409)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(JSON.stringify(response.body)).not.toContain('second')
      expect((await get(id)).body.data).toBe('first')
    })

    it('lets exactly one of two concurrent creates with the same id win, and the neighbours of the loser succeed', async () => {
      const id = `race-${randomUUID()}`
      const responses = await Promise.all([
        post({ id, type: 'token', data: 'one' }),
        post({ type: 'token', data: 'neighbour' }),
        post({ id, type: 'token', data: 'two' }),
        post({ type: 'card', data: card() })
      ])
      expect(responses.map((response) => response.status).sort()).toEqual([201, 201, 201, 409])
      expect([responses[0].status, responses[2].status].sort()).toEqual([201, 409])
      const winner = responses[0].status === 201 ? 'one' : 'two'
      expect((await logsOf(id)).map((entry) => entry.operation)).toEqual(['create'])
      expect((await get(id)).body.data).toBe(winner)
    })

    it('deduplicates concurrent creates of the same data into one token', async () => {
      const data = card()
      const responses = await Promise.all([1, 2, 3].map(() => post({ type: 'card', data, deduplicate_token: true })))
      expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 201])
      expect(new Set(responses.map((response) => response.body.id)).size).toBe(1)
    })

    it('stores the given containers', async () => {
      const token = await create({ type: 'token', data: 'x', containers: ['/a/', '/b/c_d-e/'] })
      expect(token.containers).toEqual(['/a/', '/b/c_d-e/'])
    })

    it.each([
      ['no leading slash', ['pci/high/'], 'containers[0]'],
      ['no trailing slash', ['/pci/high'], 'containers[0]'],
      ['a double slash', ['/pci//high/'], 'containers[0]'],
      ['a space', ['/p ci/'], 'containers[0]'],
      ['a non-string entry', [1], 'containers[0]'],
      ['an empty list', [], 'containers'],
      ['a string instead of a list', '/pci/', 'containers']
    ])('rejects containers with %s', async (_label, containers, field) => {
      const response = await post({ type: 'token', data: 'x', containers })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('stores string metadata', async () => {
      const metadata = { customer: 'c-1', 'with space.and.dots': 'ok' }
      expect((await create({ type: 'token', data: 'x', metadata })).metadata).toEqual(metadata)
    })

    it.each([
      ['a number value', { a: 1 }, 'metadata.a'],
      ['a null value', { a: null }, 'metadata.a'],
      ['an object value', { a: { b: 'c' } }, 'metadata.a'],
      ['a value of 501 characters', { a: 'v'.repeat(501) }, 'metadata.a'],
      ['a list instead of a map', ['a'], 'metadata'],
      ['a string instead of a map', 'a=b', 'metadata']
    ])('rejects metadata with %s', async (_label, metadata, field) => {
      const response = await post({ type: 'token', data: 'x', metadata })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('stores search_indexes and returns them', async () => {
      const search_indexes = ['{{ data | last4 }}', '{{ data | stringify }}']
      expect((await create({ type: 'token', data: 'abcdef', search_indexes })).search_indexes).toEqual(search_indexes)
    })

    it.each([
      ['an invalid expression', ['{{ data | nope }}'], 'search_indexes[0]'],
      ['a non-string entry', [1], 'search_indexes[0]'],
      ['a string instead of a list', '{{ data }}', 'search_indexes']
    ])('rejects search_indexes with %s', async (_label, search_indexes, field) => {
      const response = await post({ type: 'token', data: 'x', search_indexes })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('gives equal data of one type equal fingerprints, and different data different ones', async () => {
      const number = cardNumber()
      const a = await create({ type: 'card', data: { number } })
      const b = await create({ type: 'card', data: { number, expiration_month: 1, expiration_year: 2031 } })
      const c = await create({ type: 'card', data: { number: cardNumber() } })
      expect(a.id).not.toBe(b.id)
      expect(a.fingerprint).toBe(b.fingerprint)
      expect(c.fingerprint).not.toBe(a.fingerprint)
    })

    it('fingerprints the value of a custom fingerprint_expression', async () => {
      const first = cardNumber()
      const second = cardNumberEndingWith(first.slice(-4))
      const fingerprint_expression = '{{ data.number | last4 }}'
      const a = await create({ type: 'card', data: { number: first }, fingerprint_expression })
      const b = await create({ type: 'card', data: { number: second }, fingerprint_expression })
      expect(a.fingerprint_expression).toBe(fingerprint_expression)
      expect(a.fingerprint).toBe(b.fingerprint)
    })

    it('can fingerprint metadata', async () => {
      const fingerprint_expression = '{{ metadata.customer }}'
      const a = await create({ type: 'token', data: 'one', metadata: { customer: 'c-42' }, fingerprint_expression })
      const b = await create({ type: 'token', data: 'two', metadata: { customer: 'c-42' }, fingerprint_expression })
      expect(a.fingerprint).toBe(b.fingerprint)
    })

    it('rejects an invalid fingerprint_expression', async () => {
      const response = await post({ type: 'token', data: 'x', fingerprint_expression: '{{ data | nope }}' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['fingerprint_expression'])
    })

    it('returns the existing token with 200 when deduplicate_token finds one', async () => {
      const data = card()
      const original = await create({ type: 'card', data })
      const response = await post({ type: 'card', data, deduplicate_token: true })
      expect(response.status).toBe(200)
      expect(response.body).toEqual(original)
    })

    it('creates a new token when deduplicate_token finds none, or is not asked for', async () => {
      const data = card()
      const first = await create({ type: 'card', data, deduplicate_token: true })
      const second = await create({ type: 'card', data })
      expect(second.id).not.toBe(first.id)
    })

    it('gives a deduplicating caller who cannot read the original only id, type, tenant_id, fingerprint and containers', async () => {
      const data = card()
      const original = await create({ type: 'card', data })
      const response = await post({ type: 'card', data, deduplicate_token: true }, creator.key)
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        id: original.id,
        type: 'card',
        tenant_id: service.tenantId,
        fingerprint: original.fingerprint,
        containers: ['/pci/high/']
      })
    })

    it('does not deduplicate against a token of another type', async () => {
      const number = cardNumber()
      const original = await create({ type: 'token', data: { number }, fingerprint_expression: '{{ data.number }}' })
      const response = await post({ type: 'card', data: { number }, deduplicate_token: true })
      expect(response.status).toBe(201)
      expect(response.body.id).not.toBe(original.id)
    })

    it.each([
      ['M/D/YYYY h:mm:ss AM ±hh:mm', '1/2/2030 3:04:05 PM +02:00', '2030-01-02T13:04:05.000Z'],
      ['M/D/YYYY h:mm:ss AM without an offset (UTC)', '12/31/2029 12:00:00 AM', '2029-12-31T00:00:00.000Z'],
      ['M/D/YYYY (12 AM UTC)', '1/2/2030', '2030-01-02T00:00:00.000Z'],
      ['ISO 8601', '2030-01-02T03:04:05-05:00', '2030-01-02T08:04:05.000Z']
    ])('accepts expires_at as %s and returns it in ISO 8601', async (_label, expires_at, iso) => {
      const token = await create({ type: 'token', data: 'x', expires_at })
      expect(token.expires_at).toBe(iso)
      expect((await get(token.id)).body.expires_at).toBe(iso)
    })

    it.each([
      ['in the past', '1/2/2020'],
      ['equal to now', '2026-11-25T12:00:00Z'],
      ['not a date', 'tomorrow'],
      ['with month 13', '13/1/2030'],
      ['with hour 13 PM', '1/2/2030 13:00:00 PM'],
      ['a number', 1893456000000]
    ])('rejects expires_at %s', async (_label, expires_at) => {
      const response = await post({ type: 'token', data: 'x', expires_at })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['expires_at'])
    })

    it('checks token:create on the destination containers', async () => {
      expect((await post({ type: 'card', data: card() }, pciOnly.key)).status).toBe(201)
      expect((await post({ type: 'token', data: 'x' }, pciOnly.key)).status).toBe(403)
      expect((await post({ type: 'card', data: card(), containers: ['/general/'] }, pciOnly.key)).status).toBe(403)
      expect((await post({ type: 'card', data: card(), containers: ['/pci/', '/general/'] }, pciOnly.key)).status).toBe(201)
    })

    it('masks the response of a rule-scoped creator by its create rule, not its read rule', async () => {
      const number = cardNumber()
      const response = await post({ type: 'card', data: { number } }, pciOnly.key)
      expect(response.body.data).toEqual({ number: masked(number) })
    })

    it('rejects a caller without token:create with 403 and creates nothing', async () => {
      const reader = await service.createApplication({ name: 'Reader', type: 'private', permissions: ['token:read'] })
      const id = `forbidden-${randomUUID()}`
      const response = await post({ id, type: 'token', data: 'x' }, reader.key)
      expect(response.status).toBe(403)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect((await get(id)).status).toBe(404)
    })

    it('rejects a management key with 403', async () => {
      expect((await post({ type: 'token', data: 'x' }, service.adminKey)).status).toBe(403)
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('POST', '/tokens', { key: null, body: { type: 'token', data: 'x' } })).status).toBe(401)
    })

    it.each([
      ['a missing type', { data: 'x' }, 'type'],
      ['a numeric type', { type: 5, data: 'x' }, 'type'],
      ['an unknown type', { type: 'ssn', data: 'x' }, 'type'],
      ['a missing data', { type: 'token' }, 'data'],
      ['an unknown field', { type: 'token', data: 'x', colour: 'blue' }, 'colour'],
      ['an unknown field named toString', { type: 'token', data: 'x', toString: 0 }, 'toString'],
      ['an unknown field named constructor', { type: 'token', data: 'x', constructor: 'x' }, 'constructor'],
      ['a numeric id', { id: 12345, type: 'token', data: 'x' }, 'id'],
      ['an empty id', { id: '', type: 'token', data: 'x' }, 'id'],
      ['an id of 2001 characters', { id: 'i'.repeat(2001), type: 'token', data: 'x' }, 'id'],
      ['a fingerprint_expression that is not a string', { type: 'token', data: 'x', fingerprint_expression: 5 }, 'fingerprint_expression'],
      ['a fingerprint_expression of 2001 characters', { type: 'token', data: 'x', fingerprint_expression: 'f'.repeat(2001) }, 'fingerprint_expression'],
      ['a deduplicate_token that is not a boolean', { type: 'token', data: 'x', deduplicate_token: 'yes' }, 'deduplicate_token'],
      ['21 containers', { type: 'token', data: 'x', containers: Array(21).fill('/a/') }, 'containers'],
      ['a container of 401 characters', { type: 'token', data: 'x', containers: [`/${'c'.repeat(399)}/`] }, 'containers[0]'],
      ['a search index of 2001 characters', { type: 'token', data: 'x', search_indexes: ['s'.repeat(2001)] }, 'search_indexes[0]'],
      ['a metadata key of 101 characters', { type: 'token', data: 'x', metadata: { ['k'.repeat(101)]: 'v' } }, `metadata.${'k'.repeat(101)}`],
      ['51 metadata keys', { type: 'token', data: 'x', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
      ['an expires_at that is not a string', { type: 'token', data: 'x', expires_at: { date: '1/1/2030' } }, 'expires_at'],
      ['21 search indexes', { type: 'token', data: 'x', search_indexes: Array(21).fill('{{ data }}') }, 'search_indexes'],
      ['a body that is an array', [{ type: 'token', data: 'x' }], '(body)'],
      ['a body that is a string', 'x', '(body)'],
      ['a body that is null', null, '(body)']
    ])('rejects %s with 400', async (_label, body, field) => {
      const response = await post(body)
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('reports every bad field at once', async () => {
      const response = await post({ type: 'card', data: { number: '1' }, containers: ['x'], metadata: { a: 1 }, colour: 1 })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors).sort()).toEqual(['colour', 'containers[0]', 'metadata.a'])
      const typed = await post({ id: 'x', type: 'card', data: { number: '1', cvc: 1 }, mask: '{{ nope | nope }}', expires_at: 'soon' })
      expect(Object.keys(typed.body.errors).sort()).toEqual(['data.cvc', 'data.number', 'expires_at', 'id', 'mask'])
    })

    it('rejects malformed JSON with 400', async () => {
      const response = await service.request('POST', '/tokens', { key: revealer.key, rawBody: '{"type": "token", "data": ' })
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(response.body.errors).toHaveProperty('(body)')
    })

    it('rejects an empty body with 400', async () => {
      expect((await service.request('POST', '/tokens', { key: revealer.key })).status).toBe(400)
    })

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json'])('rejects a %s body with 415', async (contentType) => {
      const response = await service.request('POST', '/tokens', { key: revealer.key, rawBody: '{"type":"token","data":"x"}', contentType })
      expect(response.status).toBe(415)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
    })

    it('accepts application/json with a charset', async () => {
      const response = await service.request('POST', '/tokens', { key: revealer.key, rawBody: '{"type":"token","data":"x"}', contentType: 'application/json; charset=utf-8' })
      expect(response.status).toBe(201)
    })

    it('writes one create log entry naming the application', async () => {
      const token = await create({ type: 'card', data: card() }, masker.key)
      expect(await logsOf(token.id)).toEqual([
        expect.objectContaining({ actor_id: masker.id, actor_type: 'application', entity_type: 'card', entity_id: token.id, operation: 'create' })
      ])
    })

    it('writes nothing for a rejected create', async () => {
      const id = `rejected-${randomUUID()}`
      expect((await post({ id, type: 'card', data: { number: '1' } })).status).toBe(400)
      expect(await logsOf(id)).toEqual([])
    })
  })

  describe('POST /tokens body limit', () => {
    let small: TestService
    beforeAll(async () => {
      small = await startTestService({ bodyLimitBytes: 1024 })
    })
    afterAll(() => small.stop())

    it('rejects a body over the limit with 413 and accepts one under it', async () => {
      const { key } = await small.createApplication({ name: 'App', type: 'private', permissions: ['token:create'] })
      const over = await small.request('POST', '/tokens', { key, body: { type: 'token', data: 'x'.repeat(2000) } })
      expect(over.status).toBe(413)
      expect(over.headers.get('content-type')).toContain('application/problem+json')
      const under = await small.request('POST', '/tokens', { key, body: { type: 'token', data: 'x'.repeat(900) } })
      expect(under.status).toBe(201)
      expect((await small.request('GET', '/health', { key: null })).status).toBe(200)
    })
  })

  describe('GET /tokens', () => {
    /** Creates tokens tagged with a fresh batch id, one clock second apart; returns the batch id and the tokens. */
    async function batchOf(bodies: Body[], key = revealer.key) {
      const batch = randomUUID()
      const tokens: Array<Body & { id: string }> = []
      for (const body of bodies) {
        service.clock.advance(1000)
        tokens.push(await create({ ...body, metadata: { ...(body.metadata as Body), batch } }, key))
      }
      return { batch, tokens, ids: tokens.map((token) => token.id) }
    }

    it('lists tokens newest first with pagination', async () => {
      const { batch, ids } = await batchOf([{ type: 'token', data: 'a' }, { type: 'token', data: 'b' }, { type: 'token', data: 'c' }])
      const response = await list(`metadata.batch=${batch}`)
      expect(response.status).toBe(200)
      expect(response.body.data.map((token: Body) => token.id)).toEqual([...ids].reverse())
      expect(response.body.data.map((token: Body) => token.data)).toEqual(['c', 'b', 'a'])
      expect(response.body.pagination).toEqual({ total_items: 3, page_number: 1, page_size: 20, total_pages: 1 })
    })

    it('lists tokens created within the same millisecond newest first too', async () => {
      const batch = randomUUID()
      const ids: string[] = []
      // Ids in descending order, so that ordering by id would give the opposite answer.
      for (const prefix of ['c', 'b', 'a']) ids.push((await create({ id: `${prefix}-${batch}`, type: 'token', data: prefix, metadata: { batch } })).id)
      const tokenized = await service.request('POST', '/tokenize', {
        key: revealer.key,
        body: ['z', 'y', 'x'].map((prefix) => ({ id: `${prefix}-${batch}`, type: 'token', data: prefix, metadata: { batch } }))
      })
      ids.push(...tokenized.body.map((token: Body) => token.id))
      const response = await list(`metadata.batch=${batch}`)
      expect(response.body.data.map((token: Body) => token.id)).toEqual([...ids].reverse())
    })

    it('shows the same token objects as get, with card masks as expressions', async () => {
      const { batch, tokens } = await batchOf([{ type: 'card', data: card() }], masker.key)
      const listed = (await list(`metadata.batch=${batch}`, masker.key)).body.data[0]
      expect(listed.data).toEqual(tokens[0].data)
      expect(listed.mask).toEqual({
        number: '{{ data.number | reveal_last: 4 }}',
        expiration_month: '{{ data.expiration_month }}',
        expiration_year: '{{ data.expiration_year }}'
      })
    })

    it('filters by repeated id', async () => {
      const { ids } = await batchOf([{ type: 'token', data: 1 }, { type: 'token', data: 2 }, { type: 'token', data: 3 }])
      const response = await list(`id=${ids[0]}&id=${ids[2]}&id=unknown-id`)
      expect(response.body.data.map((token: Body) => token.id)).toEqual([ids[2], ids[0]])
      expect(response.body.pagination.total_items).toBe(2)
    })

    it('filters by repeated type', async () => {
      const { batch, tokens } = await batchOf([
        { type: 'token', data: 'x' },
        { type: 'card', data: card() },
        { type: 'bank', data: { routing_number: ROUTING, account_number: '42' } }
      ])
      const cards = await list(`metadata.batch=${batch}&type=card`)
      expect(cards.body.data.map((token: Body) => token.id)).toEqual([tokens[1].id])
      const both = await list(`metadata.batch=${batch}&type=card&type=bank`)
      expect(both.body.data.map((token: Body) => token.id)).toEqual([tokens[2].id, tokens[1].id])
      expect((await list(`metadata.batch=${batch}&type=nothing`)).body.data).toEqual([])
    })

    it('matches metadata exactly and case-insensitively, ANDing several keys', async () => {
      const { batch, tokens } = await batchOf([
        { type: 'token', data: 1, metadata: { colour: 'Red', size: 'L' } },
        { type: 'token', data: 2, metadata: { colour: 'red', size: 'M' } },
        { type: 'token', data: 3, metadata: { colour: 'reddish', size: 'L' } }
      ])
      const red = await list(`metadata.batch=${batch}&metadata.colour=RED`)
      expect(red.body.data.map((token: Body) => token.id)).toEqual([tokens[1].id, tokens[0].id])
      const redLarge = await list(`metadata.batch=${batch}&metadata.colour=rEd&metadata.size=l`)
      expect(redLarge.body.data.map((token: Body) => token.id)).toEqual([tokens[0].id])
      expect(redLarge.body.pagination.total_items).toBe(1)
      expect((await list(`metadata.batch=${batch}&metadata.missing=x`)).body.data).toEqual([])
    })

    it('ignores a repeated metadata key', async () => {
      const { batch, tokens } = await batchOf([
        { type: 'token', data: 1, metadata: { colour: 'red' } },
        { type: 'token', data: 2, metadata: { colour: 'blue' } }
      ])
      const response = await list(`metadata.batch=${batch}&metadata.colour=red&metadata.colour=green`)
      expect(response.body.data.map((token: Body) => token.id)).toEqual([tokens[1].id, tokens[0].id])
    })

    it('matches metadata keys containing dots and spaces literally', async () => {
      const { batch, tokens } = await batchOf([{ type: 'token', data: 1, metadata: { 'a.b c': 'v' } }])
      const response = await list(`metadata.batch=${batch}&${encodeURIComponent('metadata.a.b c')}=V`)
      expect(response.body.data.map((token: Body) => token.id)).toEqual([tokens[0].id])
    })

    it('matches only tokens holding a metadata key named like an Object.prototype member', async () => {
      const { batch, tokens } = await batchOf([
        { type: 'token', data: 1, metadata: { constructor: 'x', toString: 'x' } },
        { type: 'token', data: 2, metadata: {} }
      ])
      for (const key of ['__proto__', 'hasOwnProperty', 'valueOf', 'prototype', '__defineGetter__']) {
        const response = await list(`metadata.batch=${batch}&metadata.${key}=x`)
        expect(response.status, key).toBe(200)
        expect(response.body.data, key).toEqual([])
        expect(response.body.pagination.total_items, key).toBe(0)
      }
      for (const key of ['constructor', 'toString']) {
        expect((await list(`metadata.batch=${batch}&metadata.${key}=X`)).body.data.map((token: Body) => token.id), key).toEqual([tokens[0].id])
      }
      expect((await list('metadata.__proto__=x')).body.data).toEqual([])
      expect((await list('__proto__=x')).body.errors).toHaveProperty(['__proto__'])
    })

    it('pages through the results and answers past the end with an empty page', async () => {
      const { batch, ids } = await batchOf([1, 2, 3, 4, 5].map((data) => ({ type: 'token', data })))
      const first = await list(`metadata.batch=${batch}&size=2`)
      expect(first.body.data.map((token: Body) => token.id)).toEqual([ids[4], ids[3]])
      expect(first.body.pagination).toEqual({ total_items: 5, page_number: 1, page_size: 2, total_pages: 3 })
      const third = await list(`metadata.batch=${batch}&size=2&page=3`)
      expect(third.body.data.map((token: Body) => token.id)).toEqual([ids[0]])
      const beyond = await list(`metadata.batch=${batch}&size=2&page=4`)
      expect(beyond.status).toBe(200)
      expect(beyond.body.data).toEqual([])
      expect(beyond.body.pagination).toEqual({ total_items: 5, page_number: 4, page_size: 2, total_pages: 3 })
    })

    it('accepts size 1 and 100', async () => {
      expect((await list('size=1')).body.data).toHaveLength(1)
      expect((await list('size=100')).status).toBe(200)
    })

    it.each([
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=abc', 'page'],
      ['size=0', 'size'],
      ['size=101', 'size'],
      ['size=2.5', 'size'],
      ['page=1&page=2', 'page'],
      ['colour=blue', 'colour'],
      ['valueOf=1', 'valueOf'],
      [`id=${'i'.repeat(401)}`, 'id']
    ])('rejects ?%s with 400 naming %s', async (query, field) => {
      const response = await list(query)
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(Object.keys(response.body.errors).some((key) => key.startsWith(field))).toBe(true)
    })

    it('silently leaves out tokens outside the rules and counts only the visible ones', async () => {
      const { batch, tokens } = await batchOf([
        { type: 'card', data: card() },
        { type: 'token', data: 'outside' },
        { type: 'card', data: card() }
      ])
      const response = await list(`metadata.batch=${batch}`, pciOnly.key)
      expect(response.status).toBe(200)
      expect(response.body.data.map((token: Body) => token.id)).toEqual([tokens[2].id, tokens[0].id])
      expect(response.body.pagination.total_items).toBe(2)
      const paged = await list(`metadata.batch=${batch}&size=1&page=2`, pciOnly.key)
      expect(paged.body.data.map((token: Body) => token.id)).toEqual([tokens[0].id])
      expect(paged.body.pagination).toEqual({ total_items: 2, page_number: 2, page_size: 1, total_pages: 2 })
    })

    it('applies each token its own transform, the rule with the lowest priority number winning', async () => {
      const app = await service.createApplication({
        name: 'Mixed',
        type: 'private',
        rules: [rule(2, '/', 'reveal', ['token:read']), rule(1, '/pci/', 'redact', ['token:read']), rule(3, '/general/', 'mask', ['token:read'])]
      })
      const { batch, tokens } = await batchOf([
        { type: 'card', data: card() },
        { type: 'token', data: 'plain' },
        { type: 'bank', data: { routing_number: ROUTING, account_number: '123456' } }
      ])
      const response = await list(`metadata.batch=${batch}`, app.key)
      const byId = Object.fromEntries(response.body.data.map((token: Body) => [token.id, token]))
      expect(byId[tokens[0].id]).not.toHaveProperty('data')
      expect(byId[tokens[1].id].data).toBe('plain')
      expect(byId[tokens[2].id].data).toEqual({ routing_number: ROUTING, account_number: '123456' })
    })

    it('masks for a caller holding the plain permission', async () => {
      const number = cardNumber()
      const { batch } = await batchOf([{ type: 'card', data: card({ number }) }])
      const response = await list(`metadata.batch=${batch}`, masker.key)
      expect(response.body.data[0].data).toEqual({ number: masked(number), expiration_month: 12, expiration_year: 2030 })
    })

    it('rejects a caller without token:read anywhere with 403', async () => {
      expect((await list('', creator.key)).status).toBe(403)
    })

    it('leaves out expired and deleted tokens', async () => {
      const { batch, tokens } = await batchOf([
        { type: 'token', data: 'expiring', expires_at: new Date(service.clock.now() + HOUR).toISOString() },
        { type: 'token', data: 'deleted' },
        { type: 'token', data: 'kept' }
      ])
      expect((await service.request('DELETE', path(tokens[1].id), { key: revealer.key })).status).toBe(204)
      service.clock.advance(2 * HOUR)
      const response = await list(`metadata.batch=${batch}`)
      expect(response.body.data.map((token: Body) => token.id)).toEqual([tokens[2].id])
      expect(response.body.pagination.total_items).toBe(1)
    })

    it('logs a read for each listed token', async () => {
      const { batch, tokens } = await batchOf([{ type: 'token', data: 'x' }], masker.key)
      await list(`metadata.batch=${batch}`, revealer.key)
      const logs = await logsOf(tokens[0].id)
      expect(logs[0]).toMatchObject({ operation: 'read', actor_id: revealer.id, actor_type: 'application' })
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('GET', '/tokens', { key: null })).status).toBe(401)
    })
  })

  describe('GET /tokens/{id}', () => {
    it('returns the token as created', async () => {
      const token = await create({ type: 'token', data: { a: 1 }, metadata: { m: 'v' }, search_indexes: ['{{ data.a }}'], expires_at: '1/1/2030' })
      const response = await get(token.id)
      expect(response.status).toBe(200)
      expect(response.body).toEqual(token)
    })

    it('masks a card for a masking caller, with the masked values in mask', async () => {
      const number = cardNumber()
      const { id } = await create({ type: 'card', data: card({ number }) })
      const response = await get(id, masker.key)
      const view = { number: masked(number), expiration_month: 12, expiration_year: 2030 }
      expect(response.body.data).toEqual(view)
      expect(response.body.mask).toEqual(view)
      expect(JSON.stringify(response.body)).not.toContain(number)
    })

    it('reveals to a revealing caller and redacts for a redacting one', async () => {
      const data = card()
      const { id } = await create({ type: 'card', data }, masker.key)
      expect((await get(id, revealer.key)).body.data).toEqual(data)
      const redacted = await get(id, redactor.key)
      expect(redacted.status).toBe(200)
      expect(redacted.body).not.toHaveProperty('data')
      expect(redacted.body).not.toHaveProperty('mask')
      expect(JSON.stringify(redacted.body)).not.toContain(data.number)
    })

    it('leaves data out for a masking caller when the token has no mask', async () => {
      const { id } = await create({ type: 'token', data: 'no mask' })
      const response = await get(id, masker.key)
      expect(response.status).toBe(200)
      expect(response.body).not.toHaveProperty('data')
    })

    it('finds ids with spaces and non-ASCII characters', async () => {
      const id = `ünïcode id ${randomUUID()}`
      await create({ id, type: 'token', data: 'x' })
      expect((await get(id)).body.id).toBe(id)
    })

    it('answers an unknown id with 404', async () => {
      const response = await get(`unknown-${randomUUID()}`)
      expect(response.status).toBe(404)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
    })

    it('answers an over-long id with 404', async () => {
      expect((await get('i'.repeat(500))).status).toBe(404)
    })

    it('answers a token outside the rules with 403', async () => {
      const { id } = await create({ type: 'token', data: 'general' })
      const response = await get(id, pciOnly.key)
      expect(response.status).toBe(403)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
    })

    it('answers a caller without token:read with 403', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      expect((await get(id, creator.key)).status).toBe(403)
    })

    it('reads an expired token as 404', async () => {
      const { id } = await create({ type: 'token', data: 'x', expires_at: new Date(service.clock.now() + HOUR).toISOString() })
      expect((await get(id)).status).toBe(200)
      service.clock.advance(HOUR)
      expect((await get(id)).status).toBe(404)
    })

    it('logs the read with the actor', async () => {
      const { id } = await create({ type: 'bank', data: { routing_number: ROUTING, account_number: '1' } }, masker.key)
      await get(id, revealer.key)
      expect((await logsOf(id))[0]).toMatchObject({ operation: 'read', entity_type: 'bank', actor_id: revealer.id, actor_type: 'application' })
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('GET', '/tokens/whatever', { key: null })).status).toBe(401)
    })
  })

  describe('PATCH /tokens/{id}', () => {
    it.each(['application/json', 'text/plain', 'application/json-patch+json'])('rejects a %s body with 415', async (contentType) => {
      const { id } = await create({ type: 'token', data: 'x' })
      const response = await service.request('PATCH', path(id), { key: revealer.key, body: { metadata: { a: 'b' } }, contentType })
      expect(response.status).toBe(415)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect((await get(id)).body.metadata).toEqual({})
    })

    it('merges a nested data change into a card and keeps the other fields', async () => {
      const data = card({ cvc: '123' })
      const { id } = await create({ type: 'card', data })
      const response = await patch(id, { data: { expiration_month: 1, expiration_year: 2031 } })
      expect(response.status).toBe(200)
      expect(response.body.data).toEqual({ ...data, expiration_month: 1, expiration_year: 2031 })
      expect(response.body.mask).toEqual({ number: masked(data.number), expiration_month: 1, expiration_year: 2031 })
      expect((await get(id)).body.data).toEqual(response.body.data)
    })

    it('removes a data key patched to null', async () => {
      const data = card({ cvc: '123' })
      const { id } = await create({ type: 'card', data })
      const response = await patch(id, { data: { cvc: null } })
      expect(response.status).toBe(200)
      expect(response.body.data).toEqual({ number: data.number, expiration_month: 12, expiration_year: 2030 })
    })

    it('merges nested objects and replaces arrays and scalars in generic data', async () => {
      const { id } = await create({ type: 'token', data: { a: { b: 1, c: 2 }, list: [1, 2], s: 'x' } })
      const response = await patch(id, { data: { a: { c: null, d: 4 }, list: [3] } })
      expect(response.body.data).toEqual({ a: { b: 1, d: 4 }, list: [3], s: 'x' })
      const replaced = await patch(id, { data: 'now a string' })
      expect(replaced.body.data).toBe('now a string')
    })

    it('patches data whose keys collide with Object.prototype names', async () => {
      const { id } = await create({ type: 'token', data: { hasOwnProperty: 1, constructor: 'c', toString: 't', keep: true } })
      const response = await patch(id, { data: { hasOwnProperty: null, constructor: 'd', prototype: 'p' } })
      expect(response.status).toBe(200)
      expect(response.body.data).toEqual({ constructor: 'd', toString: 't', keep: true, prototype: 'p' })
    })

    it('refuses a data patch nested too deeply with 400', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)
      const response = await service.request('PATCH', path(id), { key: revealer.key, rawBody: `{"data":${deep}}`, contentType: MERGE_PATCH })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['data'])
    })

    it('refuses to remove data', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      const response = await patch(id, { data: null })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['data'])
    })

    it('re-validates card data after the patch and leaves the token unchanged on failure', async () => {
      const data = card()
      const { id } = await create({ type: 'card', data })
      for (const [change, field] of [
        [{ number: breakLuhn(data.number) }, 'data.number'],
        [{ number: null }, 'data.number'],
        [{ expiration_month: 13 }, 'data.expiration_month'],
        [{ expiration_year: 2020 }, 'data.expiration_year'],
        [{ pin: '1234' }, 'data.pin']
      ] as const) {
        const response = await patch(id, { data: change })
        expect(response.status, JSON.stringify(change)).toBe(400)
        expect(Object.keys(response.body.errors)).toContain(field)
      }
      const after = await get(id)
      expect(after.body.data).toEqual(data)
      expect(after.body).not.toHaveProperty('modified_at')
    })

    it('re-validates bank data after the patch', async () => {
      const { id } = await create({ type: 'bank', data: { routing_number: ROUTING, account_number: '1' } })
      const response = await patch(id, { data: { routing_number: '021000022' } })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['data.routing_number'])
    })

    it('recomputes the fingerprint when the data changes', async () => {
      const { id, fingerprint } = await create({ type: 'card', data: card() })
      const other = await create({ type: 'card', data: card() })
      const response = await patch(id, { data: { number: (other.data as Body).number } })
      expect(response.body.fingerprint).not.toBe(fingerprint)
      expect(response.body.fingerprint).toBe(other.fingerprint)
    })

    it('sets modified_by and modified_at and keeps created_*', async () => {
      const token = await create({ type: 'token', data: 'x' }, masker.key)
      service.clock.advance(5000)
      const response = await patch(token.id, { metadata: { a: 'b' } })
      expect(response.body).toMatchObject({ created_by: masker.id, created_at: token.created_at, modified_by: revealer.id, modified_at: now() })
    })

    it('merges metadata: null removes a key, other keys are kept', async () => {
      const { id } = await create({ type: 'token', data: 'x', metadata: { a: '1', b: '2', c: '3' } })
      const response = await patch(id, { metadata: { a: null, b: 'two', d: '4' } })
      expect(response.status).toBe(200)
      expect(response.body.metadata).toEqual({ b: 'two', c: '3', d: '4' })
      expect((await get(id)).body.metadata).toEqual({ b: 'two', c: '3', d: '4' })
    })

    it('clears metadata patched to null', async () => {
      const { id } = await create({ type: 'token', data: 'x', metadata: { a: '1' } })
      const response = await patch(id, { metadata: null })
      expect(response.status).toBe(200)
      expect(response.body.metadata).toEqual({})
    })

    it('merges an object mask and removes a mask patched to null', async () => {
      const { id } = await create({ type: 'token', data: { a: 'aaaa', b: 'bbbb' }, mask: { a: '{{ data.a }}', b: '{{ data.b }}' } })
      const merged = await patch(id, { mask: { b: null, c: '{{ data.b | reveal_last: 1 }}' } })
      expect(merged.status).toBe(200)
      expect(merged.body.mask).toEqual({ a: '{{ data.a }}', c: '{{ data.b | reveal_last: 1 }}' })
      expect((await get(id, masker.key)).body.data).toEqual({ a: 'aaaa', c: 'XXXb' })
      const removed = await patch(id, { mask: null })
      expect(removed.body).not.toHaveProperty('mask')
      expect((await get(id, masker.key)).body).not.toHaveProperty('data')
    })

    it('replaces a card mask and shows its masked values', async () => {
      const number = cardNumber()
      const { id } = await create({ type: 'card', data: { number } })
      const response = await patch(id, { mask: { number: '{{ data.number | card_mask }}' } })
      expect(response.status).toBe(200)
      const view = { number: number.slice(0, 6) + 'XXXXXX' + number.slice(-4) }
      expect(response.body.mask).toEqual(view)
      expect((await get(id, masker.key)).body.data).toEqual(view)
    })

    it('rejects a patch after which the mask cannot be evaluated on the data, and changes nothing', async () => {
      const token = await create({ type: 'token', data: '12', mask: '{{ data | to_number }}' })
      const data = await patch(token.id, { data: 'twelve' })
      expect(data.status).toBe(400)
      expect(Object.keys(data.body.errors)).toEqual(['mask'])
      const other = await create({ type: 'token', data: 'twelve' })
      const mask = await patch(other.id, { mask: '{{ data | to_number }}' })
      expect(mask.status).toBe(400)
      expect((await get(token.id)).body).toEqual(token)
      expect((await get(other.id)).body).toEqual(other)
    })

    it('rejects an invalid mask', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      const response = await patch(id, { mask: '{{ data | nope }}' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['mask'])
    })

    it('replaces containers, search_indexes and fingerprint_expression', async () => {
      const { id, fingerprint } = await create({ type: 'token', data: 'abcdef', containers: ['/a/', '/b/'], search_indexes: ['{{ data }}'] })
      const response = await patch(id, { containers: ['/c/'], search_indexes: ['{{ data | last4 }}'], fingerprint_expression: '{{ data | last4 }}' })
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({ containers: ['/c/'], search_indexes: ['{{ data | last4 }}'], fingerprint_expression: '{{ data | last4 }}' })
      expect(response.body.fingerprint).not.toBe(fingerprint)
      const same = await create({ type: 'token', data: 'zzcdef', fingerprint_expression: '{{ data | last4 }}' })
      expect(same.fingerprint).toBe(response.body.fingerprint)
    })

    it('recomputes the stored search indexes when the data changes', async () => {
      const { id } = await create({ type: 'token', data: 'before', search_indexes: ['{{ data }}'] })
      const hashes = () =>
        sql(service.host.vault.db.reader)('token_search_indexes').where({ token_id: id }).pluck('index_hash') as Promise<string[]>
      const before = await hashes()
      expect(before).toHaveLength(1)
      expect((await patch(id, { data: 'after' })).status).toBe(200)
      const after = await hashes()
      expect(after).toHaveLength(1)
      expect(after).not.toEqual(before)
      const fresh = await create({ type: 'token', data: 'after', search_indexes: ['{{ data }}'] })
      expect(await sql(service.host.vault.db.reader)('token_search_indexes').where({ token_id: fresh.id }).pluck('index_hash')).toEqual(after)
    })

    it('replaces expires_at, in any accepted format, and removes it when null', async () => {
      const { id } = await create({ type: 'token', data: 'x', expires_at: '1/1/2030' })
      const replaced = await patch(id, { expires_at: '2/3/2031 1:00:00 PM +01:00' })
      expect(replaced.body.expires_at).toBe('2031-02-03T12:00:00.000Z')
      const removed = await patch(id, { expires_at: null })
      expect(removed.status).toBe(200)
      expect(removed.body).not.toHaveProperty('expires_at')
    })

    it.each([
      ['containers with a bad path', { containers: ['nope'] }, 'containers[0]'],
      ['an empty containers list', { containers: [] }, 'containers'],
      ['search_indexes with a bad expression', { search_indexes: ['{{ data | nope }}'] }, 'search_indexes[0]'],
      ['a bad fingerprint_expression', { fingerprint_expression: '{{ data | nope }}' }, 'fingerprint_expression'],
      ['a fingerprint_expression that is not a string', { fingerprint_expression: 1 }, 'fingerprint_expression'],
      ['a past expires_at', { expires_at: '1/1/2020' }, 'expires_at'],
      ['an expires_at that is not a date', { expires_at: 'soon' }, 'expires_at'],
      ['metadata with a number value', { metadata: { a: 1 } }, 'metadata.a'],
      ['metadata that is a list', { metadata: ['a'] }, 'metadata'],
      ['a deduplicate_token that is not a boolean', { deduplicate_token: 1 }, 'deduplicate_token'],
      ['a new id', { id: 'another-id' }, 'id'],
      ['a new type', { type: 'card' }, 'type'],
      ['an unknown field', { colour: 'blue' }, 'colour'],
      ['an unknown field named toString', { toString: 0 }, 'toString'],
      ['an unknown field named hasOwnProperty', { hasOwnProperty: 0 }, 'hasOwnProperty'],
      ['a body that is an array', [{ data: 'y' }], '(body)'],
      ['a body that is a string', 'y', '(body)'],
      ['a body that is null', null, '(body)'],
      ['a body that is a number', 42, '(body)'],
      ['a body that is true', true, '(body)'],
      ['a body that is an empty string', '', '(body)']
    ])('rejects %s with 400 and changes nothing', async (_label, body, field) => {
      const token = await create({ type: 'token', data: 'x', metadata: { keep: 'me' } })
      const response = await patch(token.id, body)
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(Object.keys(response.body.errors)).toContain(field)
      expect((await get(token.id)).body).toEqual(token)
    })

    it('rejects malformed JSON with 400 and an empty body with 400', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      expect((await service.request('PATCH', path(id), { key: revealer.key, rawBody: '{"data":', contentType: MERGE_PATCH })).status).toBe(400)
      expect((await service.request('PATCH', path(id), { key: revealer.key })).status).toBe(400)
    })

    it('accepts an empty patch and only touches modified_*', async () => {
      const token = await create({ type: 'token', data: 'x' })
      const response = await patch(token.id, {})
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ ...token, modified_by: revealer.id, modified_at: now() })
    })

    it('shapes the response by the caller update transform', async () => {
      const data = card()
      const { id } = await create({ type: 'card', data })
      const response = await patch(id, { metadata: { a: 'b' } }, masker.key)
      expect(response.body.data).toEqual({ number: masked(data.number), expiration_month: 12, expiration_year: 2030 })
      const redacted = await patch(id, { metadata: { a: 'c' } }, redactor.key)
      expect(redacted.status).toBe(200)
      expect(redacted.body).not.toHaveProperty('data')
    })

    it('redacts data, metadata, fingerprint_expression, search_indexes and mask when the update duplicates a token the caller cannot read', async () => {
      const updater = await service.createApplication({
        name: 'Updater',
        type: 'private',
        rules: [rule(1, '/general/', 'reveal', ['token:read', 'token:update', 'token:create'])]
      })
      const secret = `secret-${randomUUID()}`
      await create({ type: 'token', data: secret, containers: ['/hidden/'] })
      const own = await create({ type: 'token', data: 'mine', mask: '{{ data | reveal_last: 2 }}', metadata: { m: 'v' }, search_indexes: ['{{ data }}'] }, updater.key)
      const response = await patch(own.id, { data: secret }, updater.key)
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        id: own.id,
        tenant_id: service.tenantId,
        type: 'token',
        fingerprint: expect.stringMatching(FINGERPRINT),
        containers: ['/general/high/'],
        created_by: updater.id,
        created_at: own.created_at,
        modified_by: updater.id,
        modified_at: now()
      })
      // The update itself was applied.
      expect((await get(own.id)).body.data).toBe(secret)
    })

    it('does not redact the duplicate when the caller can read the original', async () => {
      const secret = `visible-${randomUUID()}`
      await create({ type: 'token', data: secret })
      const own = await create({ type: 'token', data: 'mine', metadata: { m: 'v' } })
      const response = await patch(own.id, { data: secret })
      expect(response.body).toMatchObject({ data: secret, metadata: { m: 'v' }, fingerprint_expression: '{{ data | stringify }}' })
    })

    it('rejects a caller without token:update with 403 and changes nothing', async () => {
      const token = await create({ type: 'card', data: card() })
      const response = await patch(token.id, { metadata: { a: 'b' } }, pciOnly.key)
      expect(response.status).toBe(403)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect((await get(token.id)).body).toEqual(token)
    })

    it('rejects moving a token into containers the caller may not update, with 403', async () => {
      const updater = await service.createApplication({ name: 'General updater', type: 'private', rules: [rule(1, '/general/', 'mask', ['token:update', 'token:create'])] })
      const { id } = await create({ type: 'token', data: 'x' }, updater.key)
      expect((await patch(id, { containers: ['/pci/'] }, updater.key)).status).toBe(403)
      expect((await get(id)).body.containers).toEqual(['/general/high/'])
    })

    it('answers an unknown id with 404', async () => {
      const response = await patch(`unknown-${randomUUID()}`, { metadata: { a: 'b' } })
      expect(response.status).toBe(404)
    })

    it('answers an expired token with 404', async () => {
      const { id } = await create({ type: 'token', data: 'x', expires_at: new Date(service.clock.now() + HOUR).toISOString() })
      service.clock.advance(HOUR)
      expect((await patch(id, { metadata: { a: 'b' } })).status).toBe(404)
    })

    it('writes one update log entry', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      await patch(id, { metadata: { a: 'b' } }, masker.key)
      const logs = await logsOf(id)
      expect(logs.map((entry) => entry.operation)).toEqual(['update', 'create'])
      expect(logs[0]).toMatchObject({ actor_id: masker.id, actor_type: 'application' })
    })

    it('writes no update log entry for a rejected patch', async () => {
      const { id } = await create({ type: 'card', data: card() })
      await patch(id, { data: { number: '1' } })
      expect((await logsOf(id)).map((entry) => entry.operation)).toEqual(['create'])
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('PATCH', '/tokens/abc', { key: null, body: {}, contentType: MERGE_PATCH })).status).toBe(401)
    })
  })

  describe('DELETE /tokens/{id}', () => {
    it('deletes with 204; the token then reads as 404 and leaves the list', async () => {
      const batch = randomUUID()
      const { id } = await create({ type: 'card', data: card(), metadata: { batch } })
      const response = await service.request('DELETE', path(id), { key: masker.key })
      expect(response.status).toBe(204)
      expect(response.body).toBeUndefined()
      expect((await get(id)).status).toBe(404)
      expect((await list(`metadata.batch=${batch}`)).body).toMatchObject({ data: [], pagination: { total_items: 0 } })
      expect((await patch(id, { metadata: { a: 'b' } })).status).toBe(404)
      expect((await service.request('DELETE', path(id), { key: masker.key })).status).toBe(404)
    })

    it('rejects a caller without token:delete with 403 and keeps the token', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      for (const key of [creator.key, pciOnly.key]) {
        const response = await service.request('DELETE', path(id), { key })
        expect(response.status).toBe(403)
        expect(response.headers.get('content-type')).toContain('application/problem+json')
      }
      expect((await get(id)).status).toBe(200)
    })

    it('answers an unknown id with 404', async () => {
      expect((await service.request('DELETE', path(`unknown-${randomUUID()}`), { key: masker.key })).status).toBe(404)
    })

    it('writes a delete log entry', async () => {
      const { id } = await create({ type: 'bank', data: { routing_number: ROUTING, account_number: '77' } })
      await service.request('DELETE', path(id), { key: masker.key })
      const logs = await logsOf(id)
      expect(logs[0]).toMatchObject({ operation: 'delete', entity_type: 'bank', actor_id: masker.id, actor_type: 'application' })
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('DELETE', '/tokens/abc', { key: null })).status).toBe(401)
    })
  })

  describe('audit', () => {
    it('records create, read, update and delete with the acting application', async () => {
      const { id } = await create({ type: 'token', data: 'audited' }, masker.key)
      service.clock.advance(1000)
      await get(id, revealer.key)
      service.clock.advance(1000)
      await patch(id, { data: 'changed' }, revealer.key)
      service.clock.advance(1000)
      await service.request('DELETE', path(id), { key: masker.key })
      const logs = await logsOf(id)
      expect(logs.map((entry) => [entry.operation, entry.actor_id, entry.actor_type, entry.entity_type])).toEqual([
        ['delete', masker.id, 'application', 'token'],
        ['update', revealer.id, 'application', 'token'],
        ['read', revealer.id, 'application', 'token'],
        ['create', masker.id, 'application', 'token']
      ])
      expect(JSON.stringify(logs)).not.toContain('audited')
      expect(JSON.stringify(logs)).not.toContain('changed')
    })
  })
})
