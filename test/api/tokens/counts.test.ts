/**
 * GET /tokens at scale: total_items kept by counters (unfiltered and by type) and
 * counted through indexes (filters), and metadata filters through their index.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { HOUR, service, masker, revealer, path, create, list, patch, useTokensService, type Body } from './fixture'

useTokensService()

/** total_items as a caller with the plain permission sees it (the count from the counters). */
const totalOf = async (query = '') => {
  const response = await list(`size=1&${query}`, masker.key)
  expect(response.status).toBe(200)
  return response.body.pagination.total_items as number
}

const tokenize = (body: unknown) => service.request('POST', '/tokenize', { key: masker.key, body })

describe('GET /tokens total_items', () => {
  it('follows creates, tokenize, updates, deletes and expiry, unfiltered and by type', async () => {
    const before = { all: await totalOf(), token: await totalOf('type=token'), card: await totalOf('type=card'), both: await totalOf('type=token&type=bank') }
    const expiring = await create({ type: 'token', data: 'soon gone', expires_at: new Date(service.clock.now() + HOUR).toISOString() }, masker.key)
    const deleted = await create({ type: 'token', data: 'deleted' }, masker.key)
    expect((await tokenize(['a', 'b', { type: 'bank', data: { routing_number: '021000021', account_number: '1234' } }])).status).toBe(200)
    expect(await totalOf()).toBe(before.all + 5)
    expect(await totalOf('type=token')).toBe(before.token + 4)
    expect(await totalOf('type=token&type=bank')).toBe(before.both + 5)
    expect(await totalOf('type=card')).toBe(before.card)

    expect((await patch(deleted.id, { metadata: { note: 'changed' } }, masker.key)).status).toBe(200)
    expect(await totalOf()).toBe(before.all + 5)
    expect((await service.request('DELETE', path(deleted.id), { key: masker.key })).status).toBe(204)
    expect(await totalOf()).toBe(before.all + 4)

    // Expired and not yet swept: already left out of the count, as of the list.
    service.clock.advance(2 * HOUR)
    expect((await list('size=100', masker.key)).body.data.map((token: Body) => token.id)).not.toContain(expiring.id)
    expect(await totalOf()).toBe(before.all + 3)
    expect(await totalOf('type=token')).toBe(before.token + 2)
    await service.host.vault.services.jobs.runDueJobs()
    expect(await totalOf()).toBe(before.all + 3)
    expect(await totalOf('type=token')).toBe(before.token + 2)
  })

  it('is the same count for a rule-bound caller that may read everything and for the counters', async () => {
    // The revealer reads through a rule on `/`: its count goes through the filter, the masker's through the counters.
    await create({ type: 'token', data: 'one more' }, masker.key)
    const visible = await list('size=1', revealer.key)
    expect(visible.body.pagination.total_items).toBe(await totalOf())
  })

  it('reports more than 10,000 tokens matching a filter as 10,001', { timeout: 240_000 }, async () => {
    const batch = randomUUID()
    const requests = Array.from({ length: 10_050 }, (_, i) => ({ type: 'token', data: i, metadata: { batch } }))
    for (let start = 0; start < requests.length; start += 1_000) expect((await tokenize(requests.slice(start, start + 1_000))).status).toBe(200)
    const response = await list(`metadata.batch=${batch}&size=100`, masker.key)
    expect(response.body.pagination).toEqual({ total_items: 10_001, page_number: 1, page_size: 100, total_pages: 101 })
    expect(response.body.data).toHaveLength(100)
    // Pages past the counted ones still answer.
    expect((await list(`metadata.batch=${batch}&size=100&page=102`, masker.key)).body.data).toEqual([])
    expect((await list(`metadata.batch=${batch}&size=1&page=10001`, masker.key)).body.data).toHaveLength(1)
  })
})

describe('GET /tokens metadata filters through the index', () => {
  it('matches the new values after an update, never the old ones, and not a removed key', async () => {
    const batch = randomUUID()
    const token = await create({ type: 'token', data: 1, metadata: { batch, colour: 'Red', size: 'L' } }, masker.key)
    expect((await patch(token.id, { metadata: { colour: 'Blue', size: null } }, masker.key)).status).toBe(200)
    const ids = async (query: string) => (await list(`metadata.batch=${batch}&${query}`, masker.key)).body.data.map((found: Body) => found.id)
    expect(await ids('metadata.colour=blue')).toEqual([token.id])
    expect(await ids('metadata.colour=red')).toEqual([])
    expect(await ids('metadata.size=l')).toEqual([])
    expect(await ids('')).toEqual([token.id])
  })

  it('matches keys exactly: another case or a prefix of the key is another key', async () => {
    const batch = randomUUID()
    await create({ type: 'token', data: 1, metadata: { batch, Colour: 'red' } }, masker.key)
    expect((await list(`metadata.batch=${batch}&metadata.colour=red`, masker.key)).body.pagination.total_items).toBe(0)
    expect((await list(`metadata.batch=${batch}&metadata.Col=red`, masker.key)).body.pagination.total_items).toBe(0)
    expect((await list(`metadata.batch=${batch}&metadata.Colour=RED`, masker.key)).body.pagination.total_items).toBe(1)
  })

  it('folds case beyond ASCII, as JavaScript lower-cases', async () => {
    const batch = randomUUID()
    const token = await create({ type: 'token', data: 1, metadata: { batch, colour: 'Écru ΣΑΣ' } }, masker.key)
    const response = await list(`metadata.batch=${batch}&metadata.colour=${encodeURIComponent('éCRU σας')}`, masker.key)
    expect(response.body.data.map((found: Body) => found.id)).toEqual([token.id])
  })

  it('leaves out a deleted token, its metadata gone with it', async () => {
    const batch = randomUUID()
    const token = await create({ type: 'token', data: 1, metadata: { batch } }, masker.key)
    expect((await service.request('DELETE', path(token.id), { key: masker.key })).status).toBe(204)
    expect((await list(`metadata.batch=${batch}`, masker.key)).body.pagination.total_items).toBe(0)
  })
})
