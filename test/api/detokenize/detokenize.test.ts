/**
 * POST /detokenize over HTTP: what the Basis Theory SDK hides (problem documents,
 * bodies that are bare values) and the bounds on a hostile body's work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_DETOKENIZED_CHARS } from '../../../src/main/domain/detokenize'
import { EXPRESSION_LIMITS } from '../../../src/main/domain/expressions'
import { startTestService, type TestService } from '../../helpers/service'

const rule = (transform: string, permissions = ['token:create', 'token:read']) => [{ priority: 1, container: '/', transform, permissions }]

describe('POST /detokenize', () => {
  let service: TestService
  let revealKey: string
  let redactKey: string
  let creatorKey: string
  let textId: string

  const detokenize = (body: unknown, key = revealKey) => service.request('POST', '/detokenize', { key, body })
  const readsOf = async (id: string) => {
    const logs = await service.request('GET', `/logs?entity_id=${encodeURIComponent(id)}&size=100`)
    return logs.body.data.filter((entry: { operation: string }) => entry.operation === 'read').length
  }

  beforeAll(async () => {
    service = await startTestService()
    revealKey = (await service.createApplication({ name: 'Revealer', type: 'private', rules: rule('reveal') })).key
    redactKey = (await service.createApplication({ name: 'Redactor', type: 'private', rules: rule('redact') })).key
    creatorKey = (await service.createApplication({ name: 'Creator', type: 'private', permissions: ['token:create'] })).key
    const created = await service.request('POST', '/tokens', { key: revealKey, body: { type: 'token', data: 'Sensitive Value' } })
    textId = created.body.id
  })
  afterAll(() => service.stop())

  it('answers a body that is one expression with the bare JSON value', async () => {
    const response = await detokenize(`{{ ${textId} }}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(response.body).toBe('Sensitive Value')
  })

  it('leaves strings without complete expressions, numbers, booleans and null as they are', async () => {
    const body = { open: '{{ not closed', braces: '{ x }', n: 1.5, b: false, z: null, list: [] }
    expect((await detokenize(body)).body).toEqual(body)
  })

  it('gives null for the data a redacting caller may not see, and the token without data', async () => {
    const response = await detokenize({ data: `{{ ${textId} }}`, text: `[{{ ${textId} }}]`, token: `{{ token: ${textId} }}` }, redactKey)
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({ data: null, text: '[]', token: { id: textId } })
    expect(response.body.token).not.toHaveProperty('data')
  })

  it('refuses a caller without token:read with 403, whatever the body', async () => {
    expect((await detokenize({ plain: 'text' }, creatorKey)).status).toBe(403)
    expect((await detokenize({ value: `{{ ${textId} }}` }, creatorKey)).status).toBe(403)
  })

  it('names each string holding a malformed expression, and reads no token', async () => {
    const before = await readsOf(textId)
    const response = await detokenize({
      empty: '{{ }}',
      spaces: '{{ two words }}',
      pipe: `{{ ${textId} | }}`,
      filter: `{{ ${textId} | no_such_filter }}`,
      argument: `{{ ${textId} | reveal_last: 'x' }}`,
      long: `{{ ${'a'.repeat(401)} }}`
    })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(Object.keys(response.body.errors).sort()).toEqual(['argument', 'empty', 'filter', 'long', 'pipe', 'spaces'])
    expect(await readsOf(textId)).toBe(before)
  })

  it('names the field whose filter fails on the data, without quoting the data', async () => {
    const response = await detokenize({ card: { number: `{{ ${textId} | card_mask }}` } })
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ 'card.number': ['card_mask expects a card number of 13 to 19 digits'] })
    expect(JSON.stringify(response.body)).not.toContain('Sensitive')
  })

  it('refuses an unknown id with 400 naming every field that names it, and audits no read of the others', async () => {
    const before = await readsOf(textId)
    const response = await detokenize({ known: `{{ ${textId} }}`, unknown: ['{{ missing-id }}', 'x {{ token: missing-id }}'] })
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ 'unknown[0]': ['names a token that does not exist'], 'unknown[1]': ['names a token that does not exist'] })
    expect(await readsOf(textId)).toBe(before)
  })

  it(`refuses more than ${EXPRESSION_LIMITS.perRequest} expressions with 400 naming the first one past the limit`, async () => {
    const body = Array.from({ length: EXPRESSION_LIMITS.perRequest + 1 }, () => `{{ ${textId} }}`)
    const response = await detokenize(body)
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ [`[${EXPRESSION_LIMITS.perRequest}]`]: [`a request may carry at most ${EXPRESSION_LIMITS.perRequest} expressions`] })
  })

  it('counts every expression of a mixed string', async () => {
    const text = Array.from({ length: EXPRESSION_LIMITS.perRequest + 1 }, () => `{{ ${textId} }}`).join(',')
    const response = await detokenize({ text })
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ text: [`a request may carry at most ${EXPRESSION_LIMITS.perRequest} expressions`] })
  })

  it('refuses nesting deeper than 32 levels with 400', async () => {
    let body: unknown = `{{ ${textId} }}`
    for (let level = 0; level < 40; level++) body = [body]
    const response = await detokenize(body)
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ [`[0]`.repeat(33)]: ['nesting deeper than 32 levels is not supported'] })
  })

  it("answers 413 naming the field where the filters ran out of the request's expression time", async () => {
    const big = await service.request('POST', '/tokens', { key: revealKey, body: { type: 'token', data: 'x'.repeat(30_000) } })
    const filters = "pad_left: 1000, 'x' | stringify | stringify | stringify"
    const body = Array.from({ length: EXPRESSION_LIMITS.perRequest }, () => `{{ ${big.body.id} | ${filters} }}`)
    const response = await detokenize(body)
    expect(response.status).toBe(413)
    expect(response.body.code).toBe('expression_budget_exceeded')
    expect(Object.keys(response.body.errors)).toEqual([expect.stringMatching(/^\[\d+\]$/)])
  })

  it('refuses with 413 a body whose values would make the response too large, naming the field where it passes the limit', async () => {
    const megabyte = await service.request('POST', '/tokens', { key: revealKey, body: { type: 'token', data: 'x'.repeat(1_000_000) } })
    const references = MAX_DETOKENIZED_CHARS / 1_000_000 + 1
    const response = await detokenize({ many: Array.from({ length: references }, () => `{{ ${megabyte.body.id} }}`) })
    expect(response.status).toBe(413)
    expect(response.body.errors).toEqual({ [`many[${references - 1}]`]: [`the response passes its ${MAX_DETOKENIZED_CHARS} character limit here`] })
  })
})
