import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MANAGEMENT_PERMISSIONS, TOKEN_PERMISSIONS } from '../../../src/shared/permissions'
import { startTestService, type TestService } from '../../helpers/service'
import { sql } from '../../../src/main/storage/connections'
import { storedBytes } from '../../helpers/database'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
const HOUR = 60 * 60 * 1000

const privateApp = (extra: Record<string, unknown> = {}) => ({ name: 'Backend', type: 'private', permissions: ['token:read'], ...extra })

describe('applications', () => {
  let service: TestService
  let adminId: string
  /** A management key holding only `log:read`. */
  let logReaderKey: string
  /** A private key (no management permissions at all). */
  let privateKey: string

  beforeAll(async () => {
    service = await startTestService()
    adminId = (await service.request('GET', '/applications/key')).body.id
    logReaderKey = (await service.createApplication({ name: 'Auditor', type: 'management', permissions: ['log:read'] })).key
    privateKey = (await service.createApplication(privateApp())).key
  })
  afterAll(() => service.stop())

  async function logsOf(entityId: string) {
    const response = await service.request('GET', `/logs?entity_type=application&entity_id=${entityId}&size=100`)
    expect(response.status).toBe(200)
    return response.body.data as Array<Record<string, unknown>>
  }

  describe('POST /applications', () => {
    it('creates an application and returns it with its key, 201', async () => {
      const response = await service.request('POST', '/applications', { body: privateApp({ permissions: ['token:read', 'token:create'] }) })
      expect(response.status).toBe(201)
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        tenant_id: service.tenantId,
        name: 'Backend',
        key: expect.stringMatching(/^key_private_[A-Za-z0-9_-]{43}$/),
        type: 'private',
        permissions: ['token:read', 'token:create'],
        rules: [],
        created_by: adminId,
        created_at: new Date(service.clock.now()).toISOString(),
        keys: [{ id: expect.stringMatching(UUID), key: response.body.key, created_by: adminId, created_at: new Date(service.clock.now()).toISOString() }]
      })
    })

    it('prefixes each key with the application type', async () => {
      for (const [type, permissions] of [
        ['public', ['token:create']],
        ['management', ['log:read']]
      ] as const) {
        const { key } = await service.createApplication({ name: type, type, permissions })
        expect(key.startsWith(`key_${type}_`)).toBe(true)
      }
    })

    it('issues a key that authenticates at once', async () => {
      const created = await service.createApplication({ name: 'Reader', type: 'management', permissions: ['application:read'] })
      const response = await service.request('GET', '/applications/key', { key: created.key })
      expect(response.status).toBe(200)
      expect(response.body.id).toBe(created.id)
    })

    it('stores rules with containers, drops duplicate permissions, and accepts rules alone', async () => {
      const rules = [
        { description: 'PCI read', priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read', 'token:read'] },
        { priority: 2, container: '/', transform: 'redact', permissions: ['token:search'] }
      ]
      const response = await service.request('POST', '/applications', { body: { name: 'Rules', type: 'private', rules } })
      expect(response.status).toBe(201)
      expect(response.body.permissions).toEqual([])
      expect(response.body.rules).toEqual([{ ...rules[0], permissions: ['token:read'] }, rules[1]])
    })

    it('accepts a name of exactly 200 characters', async () => {
      const response = await service.request('POST', '/applications', { body: privateApp({ name: 'n'.repeat(200) }) })
      expect(response.status).toBe(201)
      expect(response.body.name).toHaveLength(200)
    })

    it('returns expires_at as ISO 8601', async () => {
      const response = await service.request('POST', '/applications', { body: privateApp({ expires_at: '2030-01-02T03:04:05+01:00' }) })
      expect(response.status).toBe(201)
      expect(response.body.expires_at).toBe('2030-01-02T02:04:05.000Z')
    })

    it.each([
      ['a missing name', { type: 'private', permissions: ['token:read'] }, 'name'],
      ['a name that is not a string', privateApp({ name: 42 }), 'name'],
      ['an empty name', privateApp({ name: '' }), 'name'],
      ['a name of 201 characters', privateApp({ name: 'n'.repeat(201) }), 'name'],
      ['a missing type', { name: 'x', permissions: ['token:read'] }, 'type'],
      ['an unknown type', privateApp({ type: 'admin' }), 'type'],
      ['a type that is not a string', privateApp({ type: 1 }), 'type'],
      ['permissions that are not an array', privateApp({ permissions: 'token:read' }), 'permissions'],
      ['an unknown permission', privateApp({ permissions: ['token:fly'] }), 'permissions[0]'],
      ['a read permission on a public application', { name: 'x', type: 'public', permissions: ['token:read'] }, 'permissions[0]'],
      ['a management permission on a private application', privateApp({ permissions: ['log:read'] }), 'permissions[0]'],
      ['a token permission on a management application', { name: 'x', type: 'management', permissions: ['token:create'] }, 'permissions[0]'],
      ['empty permissions and rules', privateApp({ permissions: [], rules: [] }), 'permissions'],
      ['neither permissions nor rules', { name: 'x', type: 'private' }, 'permissions'],
      ['an unknown field', privateApp({ colour: 'blue' }), 'colour'],
      ['a key chosen by the caller', privateApp({ key: 'key_private_mine' }), 'key'],
      ['rules that are not an array', privateApp({ rules: {} }), 'rules'],
      [
        'a rule with both container and conditions',
        privateApp({ rules: [{ priority: 1, container: '/a/', conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }], transform: 'mask', permissions: ['token:read'] }] }),
        'rules[0].conditions'
      ],
      [
        'a rule with conditions on an application',
        privateApp({ rules: [{ priority: 1, conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }], transform: 'mask', permissions: ['token:read'] }] }),
        'rules[0].conditions'
      ],
      ['a rule without a container', privateApp({ rules: [{ priority: 1, transform: 'mask', permissions: ['token:read'] }] }), 'rules[0].container'],
      ['a rule with priority 0', privateApp({ rules: [{ priority: 0, container: '/', transform: 'mask', permissions: ['token:read'] }] }), 'rules[0].priority'],
      ['a fractional priority', privateApp({ rules: [{ priority: 1.5, container: '/', transform: 'mask', permissions: ['token:read'] }] }), 'rules[0].priority'],
      ['a missing priority', privateApp({ rules: [{ container: '/', transform: 'mask', permissions: ['token:read'] }] }), 'rules[0].priority'],
      ['an unknown transform', privateApp({ rules: [{ priority: 1, container: '/', transform: 'encrypt', permissions: ['token:read'] }] }), 'rules[0].transform'],
      ['a container without slashes', privateApp({ rules: [{ priority: 1, container: 'pci', transform: 'mask', permissions: ['token:read'] }] }), 'rules[0].container'],
      ['a container without the trailing slash', privateApp({ rules: [{ priority: 1, container: '/pci', transform: 'mask', permissions: ['token:read'] }] }), 'rules[0].container'],
      ['a rule granting nothing', privateApp({ rules: [{ priority: 1, container: '/', transform: 'mask', permissions: [] }] }), 'rules[0].permissions'],
      ['a rule permission the type may not hold', privateApp({ rules: [{ priority: 1, container: '/', transform: 'mask', permissions: ['log:read'] }] }), 'rules[0].permissions[0]'],
      ['an unknown rule field', privateApp({ rules: [{ priority: 1, container: '/', transform: 'mask', permissions: ['token:read'], colour: 'x' }] }), 'rules[0].colour'],
      ['an expires_at in the past', privateApp({ expires_at: '2020-01-01T00:00:00Z' }), 'expires_at'],
      ['an expires_at of now', privateApp({ expires_at: '2026-11-25T12:00:00Z' }), 'expires_at'],
      ['an expires_at that is not a date', privateApp({ expires_at: 'tomorrow' }), 'expires_at'],
      ['an expires_at that is not a string', privateApp({ expires_at: 1893456000000 }), 'expires_at'],
      ['a body that is an array', [privateApp()], '(body)'],
      ['a body that is a string', 'Backend', '(body)']
    ])('rejects %s with 400 naming the field', async (_label, body, field) => {
      const response = await service.request('POST', '/applications', { body })
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('reports every bad field at once', async () => {
      const response = await service.request('POST', '/applications', { body: { name: '', type: 'nope', extra: 1 } })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors).sort()).toEqual(['extra', 'name', 'type'])
    })

    it('rejects malformed JSON with 400', async () => {
      const response = await service.request('POST', '/applications', { rawBody: '{"name": "x",' })
      expect(response.status).toBe(400)
      expect(response.body.errors).toHaveProperty('(body)')
    })

    it('rejects an empty body with 400', async () => {
      const response = await service.request('POST', '/applications')
      expect(response.status).toBe(400)
    })

    it('rejects a body that is not JSON with 415', async () => {
      const response = await service.request('POST', '/applications', { rawBody: 'name=x&type=private', contentType: 'application/x-www-form-urlencoded' })
      expect(response.status).toBe(415)
    })

    it('rejects a caller without an API key with 401', async () => {
      const response = await service.request('POST', '/applications', { key: null, body: privateApp() })
      expect(response.status).toBe(401)
    })

    it('rejects a key without application:create with 403', async () => {
      expect((await service.request('POST', '/applications', { key: logReaderKey, body: privateApp() })).status).toBe(403)
      expect((await service.request('POST', '/applications', { key: privateKey, body: privateApp() })).status).toBe(403)
    })

    it('refuses to grant management permissions the caller does not hold, with 403', async () => {
      const creator = await service.createApplication({ name: 'Creator', type: 'management', permissions: ['application:create'] })
      const escalate = await service.request('POST', '/applications', {
        key: creator.key,
        body: { name: 'Escalated', type: 'management', permissions: ['application:create', 'tenant:update'] }
      })
      expect(escalate.status).toBe(403)
      const tokenApp = await service.request('POST', '/applications', { key: creator.key, body: privateApp({ permissions: [...TOKEN_PERMISSIONS] }) })
      expect(tokenApp.status).toBe(201)
    })

    it('writes one create log entry naming the actor', async () => {
      const { id } = await service.createApplication(privateApp())
      expect(await logsOf(id)).toEqual([
        expect.objectContaining({ actor_id: adminId, actor_type: 'application', entity_type: 'application', entity_id: id, operation: 'create' })
      ])
    })

    it('refuses a reveal rule on a public application, on create and on update: its key ships to browsers', async () => {
      const revealRule = { priority: 2, container: '/', transform: 'reveal', permissions: ['token:update'] }
      const maskRule = { priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:create'] }
      const refusal = { 'rules[1].transform': ['a public application may not reveal data (its key ships to browsers and phones): use mask or redact'] }
      const before = (await service.request('GET', '/applications?type=public&size=100')).body.data.length
      const created = await service.request('POST', '/applications', { body: { name: 'Browser', type: 'public', rules: [maskRule, revealRule] } })
      expect([created.status, created.body.errors]).toEqual([400, refusal])
      expect((await service.request('GET', '/applications?type=public&size=100')).body.data).toHaveLength(before)
      const browser = await service.createApplication({ name: 'Browser', type: 'public', rules: [maskRule] })
      const updated = await service.request('PUT', `/applications/${browser.id}`, { body: { name: 'Browser', rules: [maskRule, revealRule] } })
      expect([updated.status, updated.body.errors]).toEqual([400, refusal])
      expect((await service.request('GET', `/applications/${browser.id}`)).body.rules).toEqual([maskRule])
      const privateRevealer = await service.request('POST', '/applications', { body: privateApp({ rules: [revealRule] }) })
      expect(privateRevealer.status).toBe(201)
    })
  })

  describe('GET /applications', () => {
    it('lists applications newest first without their keys', async () => {
      const ids: string[] = []
      for (const name of ['first', 'second', 'third']) {
        service.clock.advance(1000)
        ids.push((await service.createApplication(privateApp({ name }))).id)
      }
      const response = await service.request('GET', `/applications?${ids.map((id) => `id=${id}`).join('&')}`)
      expect(response.status).toBe(200)
      expect(response.body.data.map((app: { id: string }) => app.id)).toEqual([...ids].reverse())
      expect(response.body.data.map((app: { name: string }) => app.name)).toEqual(['third', 'second', 'first'])
      for (const app of response.body.data) expect(app).not.toHaveProperty('key')
      expect(response.body.pagination).toEqual({ total_items: 3, page_number: 1, page_size: 20, total_pages: 1 })
    })

    it('never shows a key in the unfiltered list', async () => {
      const response = await service.request('GET', '/applications?size=100')
      expect(response.status).toBe(200)
      expect(response.body.data.length).toBeGreaterThan(3)
      expect(JSON.stringify(response.body)).not.toContain('key_')
    })

    it('pages through the results and answers past the end with an empty page', async () => {
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push((await service.createApplication(privateApp({ name: `page ${i}` }))).id)
      const query = ids.map((id) => `id=${id}`).join('&')
      const first = await service.request('GET', `/applications?${query}&size=2`)
      expect(first.body.data).toHaveLength(2)
      expect(first.body.pagination).toEqual({ total_items: 3, page_number: 1, page_size: 2, total_pages: 2 })
      const second = await service.request('GET', `/applications?${query}&size=2&page=2`)
      expect(second.body.data).toHaveLength(1)
      const beyond = await service.request('GET', `/applications?${query}&size=2&page=3`)
      expect(beyond.status).toBe(200)
      expect(beyond.body.data).toEqual([])
      expect(beyond.body.pagination.total_items).toBe(3)
    })

    it('filters by repeated type', async () => {
      const publicApp = await service.createApplication({ name: 'Collector', type: 'public', permissions: ['token:create'] })
      const onlyPublic = await service.request('GET', '/applications?type=public&size=100')
      expect(onlyPublic.body.data.every((app: { type: string }) => app.type === 'public')).toBe(true)
      expect(onlyPublic.body.data.map((app: { id: string }) => app.id)).toContain(publicApp.id)
      const both = await service.request('GET', '/applications?type=public&type=management&size=100')
      const types = new Set(both.body.data.map((app: { type: string }) => app.type))
      expect(types).toEqual(new Set(['public', 'management']))
      expect(both.body.pagination.total_items).toBe(both.body.data.length)
    })

    it('combines the id and type filters', async () => {
      const one = await service.createApplication(privateApp())
      const response = await service.request('GET', `/applications?id=${one.id}&id=${adminId}&type=management`)
      expect(response.body.data.map((app: { id: string }) => app.id)).toEqual([adminId])
    })

    it('accepts size 1 and size 100', async () => {
      expect((await service.request('GET', '/applications?size=1')).body.data).toHaveLength(1)
      expect((await service.request('GET', '/applications?size=100')).status).toBe(200)
    })

    it.each([
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=abc', 'page'],
      ['size=0', 'size'],
      ['size=101', 'size'],
      ['size=1.5', 'size'],
      ['id=not-a-uuid', 'id'],
      ['type=admin', 'type'],
      ['colour=blue', 'colour']
    ])('rejects ?%s with 400 naming %s', async (query, field) => {
      const response = await service.request('GET', `/applications?${query}`)
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors).some((key) => key.startsWith(field))).toBe(true)
    })

    it('rejects a caller without application:read with 403', async () => {
      expect((await service.request('GET', '/applications', { key: logReaderKey })).status).toBe(403)
    })

    it('rejects a private key with 403', async () => {
      expect((await service.request('GET', '/applications', { key: privateKey })).status).toBe(403)
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('GET', '/applications', { key: null })).status).toBe(401)
    })
  })

  describe('GET /applications/{id}', () => {
    it('returns the application without its key and logs the read', async () => {
      const created = await service.request('POST', '/applications', { body: privateApp() })
      const { key: _key, keys, ...rest } = created.body
      const withoutKey = { ...rest, keys: keys.map(({ key: _value, ...key }: Record<string, unknown>) => key) }
      const response = await service.request('GET', `/applications/${created.body.id}`)
      expect(response.status).toBe(200)
      expect(response.body).toEqual(withoutKey)
      expect(response.body).not.toHaveProperty('key')
      const logs = await logsOf(created.body.id)
      expect(logs.map((entry) => entry.operation)).toEqual(['read', 'create'])
      expect(logs[0]).toMatchObject({ actor_id: adminId, actor_type: 'application', message: 'Application retrieved' })
    })

    it('answers an unknown id with 404', async () => {
      const response = await service.request('GET', `/applications/${UNKNOWN_ID}`)
      expect(response.status).toBe(404)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
    })

    it('answers a malformed id with 404', async () => {
      expect((await service.request('GET', '/applications/not-a-uuid')).status).toBe(404)
    })

    it('reads an id in upper case as the same id, in the path and in the id filter', async () => {
      expect((await service.request('GET', `/applications/${adminId.toUpperCase()}`)).body.id).toBe(adminId)
      expect((await service.request('GET', `/applications?id=${adminId.toUpperCase()}`)).body.data.map((app: { id: string }) => app.id)).toEqual([adminId])
    })

    it('rejects a caller without application:read with 403', async () => {
      expect((await service.request('GET', `/applications/${adminId}`, { key: logReaderKey })).status).toBe(403)
    })
  })

  describe('GET /applications/key', () => {
    it('returns the calling application without its key', async () => {
      const created = await service.createApplication({ name: 'Self', type: 'management', permissions: ['application:read'] })
      const response = await service.request('GET', '/applications/key', { key: created.key })
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({ id: created.id, name: 'Self', type: 'management', permissions: ['application:read'] })
      expect(response.body).not.toHaveProperty('key')
      expect((await logsOf(created.id)).map((entry) => entry.operation)).toEqual(['read', 'create'])
    })

    it('rejects a key without application:read with 403', async () => {
      expect((await service.request('GET', '/applications/key', { key: privateKey })).status).toBe(403)
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('GET', '/applications/key', { key: null })).status).toBe(401)
    })
  })

  describe('PUT /applications/{id}', () => {
    it('replaces name, permissions and rules, and keeps the key working', async () => {
      const created = await service.createApplication(privateApp({ permissions: ['token:read', 'token:create'] }))
      service.clock.advance(5000)
      const rules = [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:use'] }]
      const response = await service.request('PUT', `/applications/${created.id}`, { body: { name: 'Renamed', rules } })
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({
        id: created.id,
        name: 'Renamed',
        type: 'private',
        permissions: [],
        rules,
        modified_by: adminId,
        modified_at: new Date(service.clock.now()).toISOString()
      })
      expect(response.body).not.toHaveProperty('key')
      expect((await service.request('GET', `/applications/${created.id}`)).body).toEqual(response.body)
      expect((await service.request('GET', '/permissions', { key: created.key })).status).toBe(200)
    })

    it('applies new grants to the key at once', async () => {
      const created = await service.createApplication({ name: 'Shrinking', type: 'management', permissions: ['application:read', 'log:read'] })
      expect((await service.request('GET', '/applications', { key: created.key })).status).toBe(200)
      const response = await service.request('PUT', `/applications/${created.id}`, { body: { name: 'Shrinking', permissions: ['log:read'] } })
      expect(response.status).toBe(200)
      expect((await service.request('GET', '/applications', { key: created.key })).status).toBe(403)
      expect((await service.request('GET', '/logs', { key: created.key })).status).toBe(200)
    })

    it('writes one update log entry', async () => {
      const created = await service.createApplication(privateApp())
      await service.request('PUT', `/applications/${created.id}`, { body: { name: 'Logged', permissions: ['token:create'] } })
      expect((await logsOf(created.id)).map((entry) => entry.operation)).toEqual(['update', 'create'])
    })

    it.each([
      ['a missing name', { permissions: ['token:read'] }, 'name'],
      ['a name of 201 characters', { name: 'n'.repeat(201), permissions: ['token:read'] }, 'name'],
      ['a name that is not a string', { name: ['x'], permissions: ['token:read'] }, 'name'],
      ['a type change', { name: 'x', type: 'management', permissions: ['token:read'] }, 'type'],
      ['an expires_at', { name: 'x', permissions: ['token:read'], expires_at: '2030-01-01T00:00:00Z' }, 'expires_at'],
      ['an unknown field', { name: 'x', permissions: ['token:read'], colour: 'x' }, 'colour'],
      ['an empty permissions array', { name: 'x', permissions: [], rules: [{ priority: 1, container: '/', transform: 'mask', permissions: ['token:read'] }] }, 'permissions'],
      ['neither permissions nor rules', { name: 'x' }, 'permissions'],
      ['a permission the type may not hold', { name: 'x', permissions: ['application:read'] }, 'permissions[0]'],
      ['a bad rule', { name: 'x', rules: [{ priority: 0, container: '/', transform: 'mask', permissions: ['token:read'] }] }, 'rules[0].priority']
    ])('rejects %s with 400 naming the field', async (_label, body, field) => {
      const { id } = await service.createApplication(privateApp())
      const response = await service.request('PUT', `/applications/${id}`, { body })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
      expect((await service.request('GET', `/applications/${id}`)).body.name).toBe('Backend')
    })

    it('rejects malformed JSON with 400 and a wrong content type with 415', async () => {
      const { id } = await service.createApplication(privateApp())
      expect((await service.request('PUT', `/applications/${id}`, { rawBody: '{' })).status).toBe(400)
      const merge = await service.request('PUT', `/applications/${id}`, { body: { name: 'x', permissions: ['token:read'] }, contentType: 'application/merge-patch+json' })
      expect(merge.status).toBe(415)
    })

    it('answers an unknown or malformed id with 404', async () => {
      const body = { name: 'x', permissions: ['token:read'] }
      expect((await service.request('PUT', `/applications/${UNKNOWN_ID}`, { body })).status).toBe(404)
      expect((await service.request('PUT', '/applications/nope', { body })).status).toBe(404)
    })

    it('rejects a caller without application:update with 403', async () => {
      const { id } = await service.createApplication(privateApp())
      const response = await service.request('PUT', `/applications/${id}`, { key: logReaderKey, body: { name: 'x', permissions: ['token:read'] } })
      expect(response.status).toBe(403)
    })

    it('refuses to grant management permissions the caller does not hold, with 403', async () => {
      const updater = await service.createApplication({ name: 'Updater', type: 'management', permissions: ['application:update'] })
      const response = await service.request('PUT', `/applications/${updater.id}`, {
        key: updater.key,
        body: { name: 'Updater', permissions: [...MANAGEMENT_PERMISSIONS] }
      })
      expect(response.status).toBe(403)
    })
  })

  describe('POST /applications/{id}/regenerate', () => {
    it('returns a new key; the old key is rejected at once and the new one works', async () => {
      const created = await service.createApplication({ name: 'Rotating', type: 'management', permissions: ['application:read'] })
      expect((await service.request('GET', '/applications/key', { key: created.key })).status).toBe(200)
      service.clock.advance(1000)
      const response = await service.request('POST', `/applications/${created.id}/regenerate`)
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({ id: created.id, name: 'Rotating', modified_by: adminId, modified_at: new Date(service.clock.now()).toISOString() })
      expect(response.body.key).toMatch(/^key_management_/)
      expect(response.body.key).not.toBe(created.key)
      expect((await service.request('GET', '/applications/key', { key: created.key })).status).toBe(401)
      const withNewKey = await service.request('GET', '/applications/key', { key: response.body.key })
      expect(withNewKey.status).toBe(200)
      expect(withNewKey.body.id).toBe(created.id)
      expect((await logsOf(created.id)).map((entry) => entry.operation)).toContain('regenerate')
    })

    it('answers an unknown or malformed id with 404', async () => {
      expect((await service.request('POST', `/applications/${UNKNOWN_ID}/regenerate`)).status).toBe(404)
      expect((await service.request('POST', '/applications/nope/regenerate')).status).toBe(404)
    })

    it('rejects a caller without application:update with 403', async () => {
      const { id } = await service.createApplication(privateApp())
      expect((await service.request('POST', `/applications/${id}/regenerate`, { key: logReaderKey })).status).toBe(403)
    })

    it("refuses to hand out the key of an application holding more than the caller, with 403", async () => {
      const updater = await service.createApplication({ name: 'Rotator', type: 'management', permissions: ['application:update'] })
      expect((await service.request('POST', `/applications/${adminId}/regenerate`, { key: updater.key })).status).toBe(403)
      expect((await service.request('POST', `/applications/${updater.id}/regenerate`, { key: updater.key })).status).toBe(200)
    })

    it('refuses to strip, lock out or delete an application holding more than the caller, with 403, and changes nothing', async () => {
      const lesser = await service.createApplication({ name: 'Lesser', type: 'management', permissions: ['application:read', 'application:update', 'application:delete'] })
      const before = (await service.request('GET', `/applications/${adminId}`)).body
      const refusals = [
        await service.request('PUT', `/applications/${adminId}`, { key: lesser.key, body: { name: before.name, permissions: ['application:read'] } }),
        ...(await Promise.all(before.keys.map((key: { id: string }) => service.request('DELETE', `/applications/${adminId}/keys/${key.id}`, { key: lesser.key })))),
        await service.request('DELETE', `/applications/${adminId}`, { key: lesser.key })
      ]
      for (const refusal of refusals) {
        expect(refusal.status).toBe(403)
        expect(refusal.headers.get('content-type')).toContain('application/problem+json')
      }
      expect((await service.request('GET', `/applications/${adminId}`)).body).toEqual(before)
      // An application holding no more than the caller stays its to change.
      const { id: lesserTarget } = await service.createApplication(privateApp())
      expect((await service.request('PUT', `/applications/${lesserTarget}`, { key: lesser.key, body: { name: 'Renamed', permissions: ['token:read'] } })).status).toBe(200)
      expect((await service.request('DELETE', `/applications/${lesserTarget}`, { key: lesser.key })).status).toBe(204)
    })
  })

  describe('DELETE /applications/{id}', () => {
    it('deletes the application with 204; its key is rejected and it reads as 404', async () => {
      const created = await service.createApplication({ name: 'Doomed', type: 'management', permissions: ['application:read'] })
      expect((await service.request('GET', '/applications/key', { key: created.key })).status).toBe(200)
      const response = await service.request('DELETE', `/applications/${created.id}`)
      expect(response.status).toBe(204)
      expect(response.body).toBeUndefined()
      expect((await service.request('GET', '/applications/key', { key: created.key })).status).toBe(401)
      expect((await service.request('GET', `/applications/${created.id}`)).status).toBe(404)
      expect((await service.request('DELETE', `/applications/${created.id}`)).status).toBe(404)
      expect((await logsOf(created.id)).map((entry) => entry.operation)).toEqual(['delete', 'read', 'create'])
    })

    it('answers a malformed id with 404', async () => {
      expect((await service.request('DELETE', '/applications/nope')).status).toBe(404)
    })

    it('rejects a caller without application:delete with 403', async () => {
      const { id } = await service.createApplication(privateApp())
      expect((await service.request('DELETE', `/applications/${id}`, { key: logReaderKey })).status).toBe(403)
      expect((await service.request('DELETE', `/applications/${id}`, { key: privateKey })).status).toBe(403)
    })
  })

  describe('expiry', () => {
    it('rejects the key of an expired application, which reads as gone until the sweep deletes it', async () => {
      const expiresAt = new Date(service.clock.now() + HOUR).toISOString()
      const created = await service.createApplication({ name: 'Short-lived', type: 'management', permissions: ['application:read'], expires_at: expiresAt })
      expect((await service.request('GET', '/applications/key', { key: created.key })).status).toBe(200)
      expect((await service.request('GET', `/applications/${created.id}`)).body.expires_at).toBe(expiresAt)

      service.clock.advance(HOUR)
      expect((await service.request('GET', '/applications/key', { key: created.key })).status).toBe(401)
      expect((await service.request('GET', `/applications/${created.id}`)).status).toBe(404)
      expect((await service.request('GET', `/applications?id=${created.id}`)).body.pagination.total_items).toBe(0)
      const db = sql(service.host.vault.db.reader)
      expect(await db('applications').where({ id: created.id }).first()).toBeDefined()

      const deleted = await service.host.vault.services.applications.expireDue(service.clock.now(), 100)
      expect(deleted).toBe(1)
      expect(await db('applications').where({ id: created.id }).first()).toBeUndefined()
      const [entry] = await logsOf(created.id)
      expect(entry).toMatchObject({ operation: 'delete', message: 'Application deleted on expiry' })
      expect(entry).not.toHaveProperty('actor_id')
      expect(await service.host.vault.services.applications.expireDue(service.clock.now(), 100)).toBe(0)
    })
  })

  describe('secrets at rest', () => {
    it('never stores a key in plaintext', async () => {
      const created = await service.createApplication(privateApp({ name: 'Secret keeper' }))
      const regenerated = (await service.request('POST', `/applications/${created.id}/regenerate`)).body.key as string
      await service.host.vault.services.context.writes.idle()
      const bytes = await storedBytes(service.dataDir)
      expect(bytes.length).toBeGreaterThan(0)
      expect(bytes.includes('Secret keeper')).toBe(true) // the scan does see what is stored
      for (const key of [created.key, regenerated, service.adminKey]) {
        expect(bytes.includes(key)).toBe(false)
        expect(bytes.includes(key.replace(/^key_[a-z]+_/, ''))).toBe(false) // the random part alone; it may itself contain '_'
      }
    })
  })

  describe('GET /permissions', () => {
    it('lists what each application type may hold', async () => {
      expect((await service.request('GET', '/permissions?application_type=public')).body).toEqual(['token:create', 'token:update'])
      expect((await service.request('GET', '/permissions?application_type=private')).body).toEqual([...TOKEN_PERMISSIONS])
      expect((await service.request('GET', '/permissions?application_type=management')).body).toEqual([...MANAGEMENT_PERMISSIONS])
    })

    it('lists the whole catalogue without a type', async () => {
      const response = await service.request('GET', '/permissions')
      expect(response.status).toBe(200)
      expect(response.body).toEqual([...TOKEN_PERMISSIONS, ...MANAGEMENT_PERMISSIONS])
    })

    it('answers any authenticated caller', async () => {
      expect((await service.request('GET', '/permissions?application_type=private', { key: privateKey })).status).toBe(200)
    })

    it('rejects an unknown type or parameter with 400', async () => {
      const badType = await service.request('GET', '/permissions?application_type=admin')
      expect(badType.status).toBe(400)
      expect(badType.body.errors).toHaveProperty('application_type')
      expect((await service.request('GET', '/permissions?type=private')).status).toBe(400)
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('GET', '/permissions', { key: null })).status).toBe(401)
    })
  })
})
