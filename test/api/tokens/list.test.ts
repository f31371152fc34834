/** Listing tokens: GET /tokens (order, filters, paging, visibility by rule, audit). */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { cardNumber } from '../../helpers/tokens'
import { HOUR, ROUTING, rule, masked, service, masker, revealer, creator, pciOnly, path, create, list, logsOf, card, useTokensService, type Body } from './fixture'

useTokensService()

describe('tokens', () => {
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
        { type: 'bank', data: { routing_number: ROUTING, account_number: '000123456789' } }
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
})
