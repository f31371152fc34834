/** Deleting tokens: DELETE /tokens/{id}, and the audit trail of a token's life. */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ROUTING, service, masker, revealer, creator, pciOnly, path, create, get, patch, list, logsOf, card, useTokensService } from './fixture'

useTokensService()

describe('tokens', () => {
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
