/**
 * NUL characters and control characters in text the vault keeps or looks up:
 * the same 400 naming the field (or 404 for a path) on SQLite and on
 * PostgreSQL, whose text cannot hold a NUL; never a 500. Token data may hold
 * anything: it is sealed, not stored as text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'

describe('NUL characters', () => {
  let service: TestService
  let key: string
  beforeAll(async () => {
    service = await startTestService()
    key = (await service.createApplication({ name: 'Nul', type: 'private', permissions: ['token:create', 'token:read', 'token:update'] })).key
  })
  afterAll(() => service.stop())

  it.each([
    ['a metadata value', '/tokens', { type: 'token', data: 'x', metadata: { a: 'x\u0000y' } }, 'metadata.a'],
    ['a literal token id', '/tokens', { id: 'abc\u0000def', type: 'token', data: 'x' }, 'id'],
    ['a token id with another control character', '/tokens', { id: 'abc\u0007def', type: 'token', data: 'x' }, 'id'],
    ['a metadata value in bulk tokenize', '/tokenize', { first: { type: 'token', data: 'x', metadata: { a: 'x\u0000' } } }, 'first.metadata.a'],
    ['a fingerprint expression', '/tokens', { type: 'token', data: 'x', fingerprint_expression: 'a\u0000b' }, 'fingerprint_expression'],
    ['a fingerprint expression in bulk tokenize', '/tokenize', [{ type: 'token', data: 'x', fingerprint_expression: '\u0000', deduplicate_token: true }], '[0].fingerprint_expression'],
    ['a search index expression', '/tokens', { type: 'token', data: 'x', search_indexes: ['{{ data }}\u0000'] }, 'search_indexes[0]']
  ])('refuses %s with a 400 naming it, and stores nothing', async (_, path, body, field) => {
    const before = (await service.request('GET', '/tokens', { key })).body.pagination.total_items
    const response = await service.request('POST', path, { key, body })
    expect(response.status).toBe(400)
    expect(Object.keys(response.body.errors)).toEqual([field])
    expect((await service.request('GET', '/tokens', { key })).body.pagination.total_items).toBe(before)
  })

  it('refuses an application name with a NUL', async () => {
    const response = await service.request('POST', '/applications', { body: { name: 'n\u0000', type: 'private', permissions: ['token:read'] } })
    expect(response.status).toBe(400)
    expect(Object.keys(response.body.errors)).toEqual(['name'])
  })

  it('refuses a merge patch setting a metadata value with a NUL, and keeps the token as it was', async () => {
    const { id } = (await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'x', metadata: { a: 'kept' } } })).body
    const response = await service.request('PATCH', `/tokens/${id}`, { key, body: { metadata: { a: 'x\u0000' } }, contentType: 'application/merge-patch+json' })
    expect(response.status).toBe(400)
    expect((await service.request('GET', `/tokens/${id}`, { key })).body.metadata).toEqual({ a: 'kept' })
  })

  it('refuses a merge patch setting a fingerprint expression with a NUL, and keeps the token as it was', async () => {
    const { id, fingerprint } = (await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'x' } })).body
    const response = await service.request('PATCH', `/tokens/${id}`, { key, body: { fingerprint_expression: '\u0000' }, contentType: 'application/merge-patch+json' })
    expect(response.status).toBe(400)
    expect(Object.keys(response.body.errors)).toEqual(['fingerprint_expression'])
    expect((await service.request('GET', `/tokens/${id}`, { key })).body.fingerprint).toBe(fingerprint)
  })

  it.each(['{{ a\u0000b }}', '{{ token: \u0000 }}', '{{ "a\u0000b" }}'])('answers detokenize of %j as a token that does not exist: 400 naming the field', async (expression) => {
    const response = await service.request('POST', '/detokenize', { key, body: { a: expression } })
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ a: ['names a token that does not exist'] })
  })

  it.each([
    ['/tokens?metadata.a=x%00y', 'metadata.a'],
    ['/tokens?id=a%00b', 'id'],
    ['/logs?entity_type=token&entity_id=a%00b', 'entity_id']
  ])('refuses the filter %s with a 400 naming it', async (path, field) => {
    const response = await service.request('GET', path, { key: path.startsWith('/logs') ? undefined : key })
    expect(response.status).toBe(400)
    expect(Object.keys(response.body.errors)).toEqual([field])
  })

  it('answers a token path with a NUL as an unknown token: 404', async () => {
    expect((await service.request('GET', '/tokens/a%00b', { key })).status).toBe(404)
  })

  it('takes a NUL inside token data: it is sealed, not stored as text', async () => {
    const created = await service.request('POST', '/tokens', { key, body: { type: 'token', data: { note: 'a\u0000b' } } })
    expect(created.status).toBe(201)
    expect((await service.request('GET', `/tokens/${created.body.id}`, { key })).status).toBe(200)
  })
})
