import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'

describe('the caller’s tenant', () => {
  let service: TestService
  let readerKey: string
  let updaterKey: string
  let tokenKey: string

  beforeAll(async () => {
    service = await startTestService()
    readerKey = (await service.createApplication({ name: 'Reader', type: 'management', permissions: ['tenant:read'] })).key
    updaterKey = (await service.createApplication({ name: 'Updater', type: 'management', permissions: ['tenant:update'] })).key
    tokenKey = (await service.createApplication({ name: 'Tokens', type: 'private', permissions: ['token:read'] })).key
  })
  afterAll(() => service.stop())

  const logsOfTenant = async () => (await service.request('GET', '/logs?entity_type=tenant')).body.data.map((entry: { operation: string; entity_id: string }) => [entry.operation, entry.entity_id])

  it('GET /tenants/self answers the tenant in Basis Theory’s shape, and the read is audited', async () => {
    const response = await service.request('GET', '/tenants/self', { key: readerKey })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ id: service.tenantId, name: 'Test tenant', owner_id: service.ownerUserId, settings: {}, created_at: expect.any(String) })
    expect(await logsOfTenant()).toContainEqual(['read', service.tenantId])
  })

  it('needs tenant:read to read and tenant:update to rename', async () => {
    expect((await service.request('GET', '/tenants/self', { key: tokenKey })).status).toBe(403)
    expect((await service.request('GET', '/tenants/self', { key: updaterKey })).status).toBe(403)
    expect((await service.request('PUT', '/tenants/self', { key: readerKey, body: { name: 'Nope' } })).status).toBe(403)
    expect((await service.request('GET', '/tenants/self', { key: null })).status).toBe(401)
  })

  it('PUT /tenants/self renames the tenant, stamps modified_at and audits the change', async () => {
    service.clock.advance(60_000)
    const response = await service.request('PUT', '/tenants/self', { key: updaterKey, body: { name: '  Acme vault ', settings: {} } })
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({ id: service.tenantId, name: 'Acme vault', modified_at: new Date(service.clock.now()).toISOString() })
    expect((await service.request('GET', '/tenants/self', { key: readerKey })).body.name).toBe('Acme vault')
    expect(await logsOfTenant()).toContainEqual(['update', service.tenantId])
  })

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 42 }, 'name'],
    [{ name: 'Acme', settings: { deduplicate_tokens: 'true' } }, 'settings.deduplicate_tokens'],
    [{ name: 'Acme', owner_id: '00000000-0000-4000-8000-000000000000' }, 'owner_id']
  ])('refuses %j with a 400 naming %s', async (body, field) => {
    const response = await service.request('PUT', '/tenants/self', { key: updaterKey, body })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    expect(Object.keys(response.body.errors)).toEqual([field])
  })
})
