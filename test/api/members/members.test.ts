import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TenantMember } from '../../../src/shared/types'
import { addMember } from '../../helpers/invitations'
import { startTestService, type TestService } from '../../helpers/service'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

describe('tenant members', () => {
  let service: TestService
  let owner: TenantMember
  let ada: TenantMember
  let grace: TenantMember
  let readerKey: string
  let deleterKey: string

  beforeAll(async () => {
    service = await startTestService()
    service.clock.advance(1000)
    ada = await addMember(service, 'ada@example.com', 'Ada', 'Lovelace')
    service.clock.advance(1000)
    grace = await addMember(service, 'grace@example.com', 'Grace', 'Hopper')
    readerKey = (await service.createApplication({ name: 'Reader', type: 'management', permissions: ['tenant:member:read'] })).key
    deleterKey = (await service.createApplication({ name: 'Deleter', type: 'management', permissions: ['tenant:member:delete'] })).key
    const list = await service.request('GET', `/tenants/self/members?user_id=${service.ownerUserId}`)
    owner = list.body.data[0]
  })
  afterAll(() => service.stop())

  describe('GET /tenants/self/members', () => {
    it('lists members with their users, newest first', async () => {
      const response = await service.request('GET', '/tenants/self/members', { key: readerKey })
      expect(response.status).toBe(200)
      expect(response.body.pagination).toEqual({ total_items: 3, page_number: 1, page_size: 20, total_pages: 1 })
      expect(response.body.data.map((member: TenantMember) => member.user.email)).toEqual(['grace@example.com', 'ada@example.com', 'owner@example.com'])
      expect(response.body.data[0]).toEqual({
        id: expect.stringMatching(UUID),
        tenant_id: service.tenantId,
        role: 'ADMIN',
        user: { id: expect.stringMatching(UUID), email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' },
        created_by: expect.stringMatching(UUID),
        created_at: new Date(service.clock.now()).toISOString()
      })
    })

    it('shows the OWNER with role OWNER', () => {
      expect(owner).toMatchObject({ role: 'OWNER', tenant_id: service.tenantId, user: { id: service.ownerUserId, email: 'owner@example.com' } })
    })

    it('filters by user_id, repeatable, in either case', async () => {
      const one = await service.request('GET', `/tenants/self/members?user_id=${ada.user.id}`)
      expect(one.body.data.map((member: TenantMember) => member.id)).toEqual([ada.id])
      const two = await service.request('GET', `/tenants/self/members?user_id=${ada.user.id}&user_id=${grace.user.id}`)
      expect(two.body.data.map((member: TenantMember) => member.id)).toEqual([grace.id, ada.id])
      const upperCase = await service.request('GET', `/tenants/self/members?user_id=${ada.user.id.toUpperCase()}`)
      expect(upperCase.body.data.map((member: TenantMember) => member.id)).toEqual([ada.id])
      const none = await service.request('GET', `/tenants/self/members?user_id=${UNKNOWN_ID}`)
      expect(none.body).toEqual({ pagination: { total_items: 0, page_number: 1, page_size: 20, total_pages: 0 }, data: [] })
    })

    it('pages with page and size; past the end is an empty page', async () => {
      const second = await service.request('GET', '/tenants/self/members?page=2&size=2')
      expect(second.body.pagination).toEqual({ total_items: 3, page_number: 2, page_size: 2, total_pages: 2 })
      expect(second.body.data.map((member: TenantMember) => member.id)).toEqual([owner.id])
      const past = await service.request('GET', '/tenants/self/members?page=9&size=50')
      expect(past.status).toBe(200)
      expect(past.body.data).toEqual([])
    })

    for (const [query, field] of [
      ['size=51', 'size'],
      ['size=0', 'size'],
      ['size=abc', 'size'],
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=1.5', 'page'],
      ['user_id=not-a-uuid', 'user_id'],
      [`user_id=${UNKNOWN_ID}&user_id=x`, 'user_id[1]'],
      ['role=OWNER', 'role']
    ]) {
      it(`answers ?${query} with a 400 naming ${field}`, async () => {
        const response = await service.request('GET', `/tenants/self/members?${query}`)
        expect(response.status).toBe(400)
        expect(response.headers.get('content-type')).toContain('application/problem+json')
        expect(Object.keys(response.body.errors)).toContain(field)
      })
    }

    it('needs tenant:member:read: 403 otherwise', async () => {
      expect((await service.request('GET', '/tenants/self/members', { key: deleterKey })).status).toBe(403)
      const privateKey = (await service.createApplication({ name: 'P', type: 'private', permissions: ['token:read'] })).key
      expect((await service.request('GET', '/tenants/self/members', { key: privateKey })).status).toBe(403)
      expect((await service.request('GET', '/tenants/self/members', { key: null })).status).toBe(401)
    })
  })

  describe('DELETE /tenants/self/members/{id}', () => {
    it('refuses to delete the OWNER with 422', async () => {
      const response = await service.request('DELETE', `/tenants/self/members/${owner.id}`)
      expect(response.status).toBe(422)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(await service.host.vault.services.members.isActiveMember(service.tenantId, service.ownerUserId)).toBe(true)
    })

    it('answers an unknown or malformed id with 404', async () => {
      expect((await service.request('DELETE', `/tenants/self/members/${UNKNOWN_ID}`)).status).toBe(404)
      expect((await service.request('DELETE', '/tenants/self/members/not-a-uuid')).status).toBe(404)
    })

    it('needs tenant:member:delete: 403 otherwise, and nothing is deleted', async () => {
      expect((await service.request('DELETE', `/tenants/self/members/${grace.id}`, { key: readerKey })).status).toBe(403)
      expect(await service.host.vault.services.members.isActiveMember(service.tenantId, grace.user.id)).toBe(true)
    })

    it('revokes a member at once, 204, and logs it', async () => {
      const members = service.host.vault.services.members
      expect(await members.isActiveMember(service.tenantId, ada.user.id)).toBe(true)
      const response = await service.request('DELETE', `/tenants/self/members/${ada.id}`, { key: deleterKey })
      expect(response.status).toBe(204)
      expect(await members.isActiveMember(service.tenantId, ada.user.id)).toBe(false)
      const list = await service.request('GET', '/tenants/self/members')
      expect(list.body.data.map((member: TenantMember) => member.id)).not.toContain(ada.id)
      expect((await service.request('DELETE', `/tenants/self/members/${ada.id}`)).status).toBe(404)
      const logs = await service.request('GET', `/logs?entity_type=member&entity_id=${ada.id}`)
      expect(logs.body.data[0]).toMatchObject({ operation: 'delete', message: 'Member deleted', actor_type: 'application' })
    })
  })
})
