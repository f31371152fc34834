/** Reading one token: GET /tokens/{id}. */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { cardNumber } from '../../helpers/tokens'
import { HOUR, ROUTING, masked, service, masker, revealer, redactor, creator, pciOnly, create, get, logsOf, card, useTokensService } from './fixture'

useTokensService()

describe('tokens', () => {
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
})
