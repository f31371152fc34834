/**
 * Property tests: whatever JSON arrives at the write endpoints, the answer is
 * never a 5xx, every error is a problem document, and the service stays healthy.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MANAGEMENT_PERMISSIONS, TOKEN_PERMISSIONS } from '../../../src/shared/permissions'
import { startTestService, type ApiResponse, type RequestOptions, type TestService } from '../../helpers/service'
import { cardNumber, MERGE_PATCH } from '../../helpers/tokens'

/** Runs per property: enough to find shallow crashes, bounded so the file stays well under a minute. */
const RUNS = 150

// ---------------------------------------------------------------------------------------------
// Generators.

/** Any JSON, with ASCII strings and with arbitrary UTF-16 (lone surrogates included). */
const anyJson = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }))

/** Anything JavaScript has, serialised the way a careless client would. */
const anythingSerialised = fc.anything({ maxDepth: 3, withNullPrototype: true, withMap: true, withSet: true, withDate: true, withTypedArray: true, withSparseArray: true }).map(
  (value) => JSON.stringify(value) ?? 'null'
)

const expression = fc.oneof(
  fc.constantFrom(
    '{{ data }}',
    '{{ data | last4 }}',
    '{{ data | reveal_last: 4 }}',
    '{{ data | reveal_last: 4, "*" }}',
    '{{ data | reveal: 2, 2 }}',
    '{{ data.number | card_mask }}',
    '{{ data.number | card_bin }}',
    '{{ data | alias_card }}',
    '{{ data | stringify }}',
    '{{ data | json: "a.b[0]" }}',
    '{{ data | to_number }}',
    '{{ data | pad_left: 1000, "x" }}',
    '{{ data | nope }}',
    '{{ data | reveal_last: "x" }}',
    '{{ data',
    '{% for i in (1..100000000) %}x{% endfor %}',
    '{% include "x" %}',
    '{{ metadata.a }}',
    '{{ data.account_number }}|{{ data.routing_number }}'
  ),
  fc.string().map((inner) => `{{ ${inner} }}`),
  fc.string()
)

const cardData = fc.record(
  {
    number: fc.oneof(fc.constantFrom('4242424242424242', '4000056655665556', '378282246310005', '6011111111111117'), fc.stringMatching(/^\d{0,22}$/), anyJson),
    expiration_month: fc.oneof(fc.integer({ min: -2, max: 14 }), anyJson),
    expiration_year: fc.oneof(fc.integer({ min: 2020, max: 2040 }), fc.integer(), anyJson),
    cvc: fc.oneof(fc.stringMatching(/^\d{2,5}$/), anyJson)
  },
  { requiredKeys: [] }
)

const bankData = fc.record(
  {
    routing_number: fc.oneof(fc.constantFrom('021000021', '011000015', '021000022'), fc.stringMatching(/^\d{0,10}$/), anyJson),
    account_number: fc.oneof(fc.stringMatching(/^\d{0,19}$/), anyJson)
  },
  { requiredKeys: [] }
)

const container = fc.oneof(fc.constantFrom('/', '/general/high/', '/pci/', '/a/b_c-d/', 'pci', '/x//', ''), fc.string())

/** A create-token request with every field present or not, and each value valid or not. */
const tokenRequest = fc.record(
  {
    id: fc.oneof(fc.uuid(), fc.string({ minLength: 0, maxLength: 8 }), fc.constantFrom('{{ data | last4 }}', '{{ data.number | last4 }}', 'a/b', 'x'.repeat(401)), anyJson),
    type: fc.oneof(fc.constantFrom('token', 'card', 'bank'), anyJson),
    data: fc.oneof(anyJson, cardData, bankData),
    mask: fc.oneof(expression, fc.dictionary(fc.string(), expression, { maxKeys: 3 }), anyJson),
    containers: fc.oneof(fc.array(container, { maxLength: 3 }), anyJson),
    metadata: fc.oneof(fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }), anyJson),
    search_indexes: fc.oneof(fc.array(expression, { maxLength: 3 }), anyJson),
    fingerprint_expression: fc.oneof(expression, anyJson),
    deduplicate_token: fc.oneof(fc.boolean(), anyJson),
    expires_at: fc.oneof(
      fc.constantFrom('1/2/2030', '2/30/2030', '1/2/2030 1:00:00 PM +02:00', '1/2/2030 13:00:00 PM', '1/2/2020', '2030-01-01T00:00:00Z', '0/0/0000', '12/31/9999 11:59:59 PM -14:00'),
      fc.string(),
      anyJson
    )
  },
  { requiredKeys: [] }
)

/** Mostly well-typed requests, sometimes with unknown fields mixed in. */
const mutatedTokenRequest = fc.oneof(
  { weight: 4, arbitrary: tokenRequest },
  { weight: 1, arbitrary: fc.tuple(tokenRequest, fc.dictionary(fc.string(), anyJson, { maxKeys: 2 })).map(([request, extra]) => ({ ...extra, ...request })) }
)

/** Tokenize bodies: plain values, token requests, and composites of both. */
const tokenizeBody = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyJson,
    mutatedTokenRequest,
    fc.array(tie('node'), { maxLength: 5 }),
    fc.dictionary(fc.string(), tie('node'), { maxKeys: 4 })
  )
})).node

const permission = fc.oneof(fc.constantFrom(...TOKEN_PERMISSIONS, ...MANAGEMENT_PERMISSIONS), fc.string(), anyJson)

const accessRule = fc.record(
  {
    description: fc.oneof(fc.string(), anyJson),
    priority: fc.oneof(fc.integer({ min: -1, max: 5 }), anyJson),
    container: fc.oneof(container, anyJson),
    conditions: fc.oneof(fc.array(fc.record({ attribute: fc.constantFrom('id', 'container', 'x'), operator: fc.constantFrom('equals', 'starts_with', 'x'), value: fc.string() })), anyJson),
    transform: fc.oneof(fc.constantFrom('redact', 'mask', 'reveal'), anyJson),
    permissions: fc.oneof(fc.array(permission, { maxLength: 3 }), anyJson)
  },
  { requiredKeys: [] }
)

const applicationBody = fc.record(
  {
    name: fc.oneof(fc.string({ maxLength: 210 }), anyJson),
    type: fc.oneof(fc.constantFrom('private', 'public', 'management'), anyJson),
    permissions: fc.oneof(fc.array(permission, { maxLength: 4 }), anyJson),
    rules: fc.oneof(fc.array(accessRule, { maxLength: 3 }), anyJson),
    expires_at: fc.oneof(fc.constantFrom('2030-01-01T00:00:00Z', '2020-01-01T00:00:00Z', 'soon'), fc.string(), anyJson)
  },
  { requiredKeys: [] }
)

const tokenPatch = fc.record(
  {
    data: fc.oneof(anyJson, cardData, bankData, fc.record({ number: fc.constant(null), cvc: fc.constant(null) }, { requiredKeys: [] })),
    mask: fc.oneof(expression, fc.dictionary(fc.string(), fc.oneof(expression, fc.constant(null)), { maxKeys: 3 }), anyJson),
    metadata: fc.oneof(fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.constant(null)), { maxKeys: 3 }), anyJson),
    containers: fc.oneof(fc.array(container, { maxLength: 3 }), anyJson),
    search_indexes: fc.oneof(fc.array(expression, { maxLength: 3 }), anyJson),
    fingerprint_expression: fc.oneof(expression, anyJson),
    deduplicate_token: fc.oneof(fc.boolean(), anyJson),
    expires_at: fc.oneof(fc.constantFrom('1/2/2030', '2030-01-01T00:00:00Z', '1/1/2020'), fc.constant(null), anyJson)
  },
  { requiredKeys: [] }
)

// ---------------------------------------------------------------------------------------------

describe('fuzzing the write endpoints', () => {
  let service: TestService
  /** Every token permission, revealing everywhere. */
  let tokenKey: string
  /** Ids of tokens (one per type) that PATCH runs against. */
  let targets: string[]

  beforeAll(async () => {
    service = await startTestService()
    tokenKey = (
      await service.createApplication({
        name: 'Fuzzer',
        type: 'private',
        rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: [...TOKEN_PERMISSIONS] }]
      })
    ).key
    targets = []
    for (const body of [
      { type: 'token', data: { a: { b: 1 } }, metadata: { a: 'b' } },
      { type: 'card', data: { number: cardNumber(), expiration_month: 12, expiration_year: 2030, cvc: '123' } },
      { type: 'bank', data: { routing_number: '021000021', account_number: '123456789' } }
    ]) {
      targets.push((await service.request('POST', '/tokens', { key: tokenKey, body })).body.id)
    }
  })
  afterAll(() => service.stop())

  /** The response invariant every run checks. */
  function expectSane(response: ApiResponse, label: string): void {
    expect(response.status, `${label}: ${JSON.stringify(response.body)}`).toBeLessThan(500)
    if (response.status >= 400) {
      expect(response.headers.get('content-type'), label).toContain('application/problem+json')
      expect(response.body, label).toMatchObject({ status: response.status, title: expect.any(String), detail: expect.any(String) })
    }
  }

  async function send(method: string, path: string, options: RequestOptions): Promise<void> {
    expectSane(await service.request(method, path, options), `${method} ${path} ${options.rawBody ?? JSON.stringify(options.body)}`.slice(0, 2000))
  }

  /** One property per generator, each sending the generated body raw. */
  function fuzz(name: string, bodies: fc.Arbitrary<string>, check: (rawBody: string) => Promise<void>) {
    it(name, async () => {
      await fc.assert(fc.asyncProperty(bodies, check), { numRuns: RUNS })
    })
  }

  const json = (arbitrary: fc.Arbitrary<unknown>) => arbitrary.map((value) => JSON.stringify(value))

  describe('POST /tokens', () => {
    const post = (rawBody: string) => send('POST', '/tokens', { key: tokenKey, rawBody })
    fuzz('never fails with a 5xx on random JSON', json(anyJson), post)
    fuzz('never fails with a 5xx on any serialised value', anythingSerialised, post)
    fuzz('never fails with a 5xx on mutated token requests', json(mutatedTokenRequest), post)
  })

  describe('POST /tokenize', () => {
    const post = (rawBody: string) => send('POST', '/tokenize', { key: tokenKey, rawBody })
    fuzz('never fails with a 5xx on random JSON', json(anyJson), post)
    fuzz('never fails with a 5xx on any serialised value', anythingSerialised, post)
    fuzz('never fails with a 5xx on nested token requests and plain values', json(tokenizeBody), post)
  })

  describe('POST /applications', () => {
    const post = (rawBody: string) => send('POST', '/applications', { rawBody })
    fuzz('never fails with a 5xx on random JSON', json(anyJson), post)
    fuzz('never fails with a 5xx on any serialised value', anythingSerialised, post)
    fuzz('never fails with a 5xx on mutated application bodies', json(applicationBody), post)
  })

  describe('PATCH /tokens/{id}', () => {
    const patch = (rawBody: string) =>
      Promise.all(targets.map((id) => send('PATCH', `/tokens/${id}`, { key: tokenKey, rawBody, contentType: MERGE_PATCH }))).then(() => undefined)
    fuzz('never fails with a 5xx on random JSON', json(anyJson), patch)
    fuzz('never fails with a 5xx on any serialised value', anythingSerialised, patch)
    fuzz('never fails with a 5xx on mutated merge patches', json(tokenPatch), patch)
  })

  describe('GET /tokens', () => {
    const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom('id', 'type', 'page', 'size', 'metadata.a', 'metadata.', 'metadata.a"b'), fc.string()), fc.string()), { maxLength: 4 })
    fuzz(
      'never fails with a 5xx on random query strings',
      query.map((pairs) => new URLSearchParams(pairs).toString()),
      (search) => send('GET', `/tokens?${search}`, { key: tokenKey })
    )
  })

  it('is still healthy, and the fuzzed tokens still read, afterwards', async () => {
    const health = await service.request('GET', '/health', { key: null })
    expect(health.status).toBe(200)
    expect(health.body).toEqual({ status: 'ok' })
    for (const id of targets) expect((await service.request('GET', `/tokens/${id}`, { key: tokenKey })).status).toBe(200)
    expect((await service.request('GET', '/tokens?size=100', { key: tokenKey })).status).toBe(200)
  })
})
