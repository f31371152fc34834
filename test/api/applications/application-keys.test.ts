import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

const privateApp = (extra: Record<string, unknown> = {}) => ({ name: 'Backend', type: 'private', permissions: ['token:read'], ...extra })

describe('application keys', () => {
  let service: TestService
  let adminId: string

  beforeAll(async () => {
    service = await startTestService()
    adminId = (await service.request('GET', '/applications/key')).body.id
  })
  afterAll(() => service.stop())

  const keysPath = (id: string) => `/applications/${id}/keys`
  /** 200 while `key` authenticates, 401 once it no longer does. */
  const statusWith = async (key: string) => (await service.request('GET', '/tokens', { key })).status

  async function messagesOf(applicationId: string): Promise<string[]> {
    const response = await service.request('GET', `/logs?entity_type=application&entity_id=${applicationId}&size=100`)
    return response.body.data.map((entry: { message: string }) => entry.message)
  }

  describe('POST /applications/{id}/keys', () => {
    it('adds a key, shown once, that authenticates beside the first one', async () => {
      const app = await service.createApplication(privateApp())
      const response = await service.request('POST', keysPath(app.id))
      expect(response.status).toBe(201)
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        key: expect.stringMatching(/^key_private_[A-Za-z0-9_-]{43}$/),
        created_by: adminId,
        created_at: new Date(service.clock.now()).toISOString()
      })
      expect(await statusWith(response.body.key)).toBe(200)
      expect(await statusWith(app.key)).toBe(200)
      expect(await messagesOf(app.id)).toContain(`Application key ${response.body.id} created`)
    })

    it('answers 404 for an unknown or malformed application id', async () => {
      expect((await service.request('POST', keysPath(UNKNOWN_ID))).status).toBe(404)
      expect((await service.request('POST', keysPath('nope'))).status).toBe(404)
    })

    it('needs application:update (403), an API key (401), and management permissions the caller holds itself (403)', async () => {
      const app = await service.createApplication(privateApp())
      const reader = await service.createApplication({ name: 'Reader', type: 'management', permissions: ['application:read'] })
      expect((await service.request('POST', keysPath(app.id), { key: reader.key })).status).toBe(403)
      expect((await service.request('POST', keysPath(app.id), { key: null })).status).toBe(401)
      const updater = await service.createApplication({ name: 'Updater', type: 'management', permissions: ['application:update'] })
      expect((await service.request('POST', keysPath(adminId), { key: updater.key })).status).toBe(403)
      expect((await service.request('POST', keysPath(app.id), { key: updater.key })).status).toBe(201)
    })
  })

  describe('GET /applications/{id}/keys', () => {
    it('lists every key, oldest first, as a bare array without values', async () => {
      const app = await service.createApplication(privateApp())
      const first = (await service.request('GET', `/applications/${app.id}`)).body.keys[0]
      service.clock.advance(1000)
      const second = (await service.request('POST', keysPath(app.id))).body
      const response = await service.request('GET', keysPath(app.id))
      expect(response.status).toBe(200)
      expect(response.body).toEqual([first, { id: second.id, created_by: adminId, created_at: second.created_at }])
    })

    it('rejects a query parameter with 400 naming it', async () => {
      const app = await service.createApplication(privateApp())
      const response = await service.request('GET', `${keysPath(app.id)}?type=private`)
      expect(response.status).toBe(400)
      expect(JSON.stringify(response.body)).toContain('type')
    })

    it('needs application:read (403) and answers 404 for an unknown application', async () => {
      const app = await service.createApplication(privateApp())
      expect((await service.request('GET', keysPath(app.id), { key: app.key })).status).toBe(403)
      expect((await service.request('GET', keysPath(UNKNOWN_ID))).status).toBe(404)
    })
  })

  describe('GET /applications/{id}/keys/{keyId}', () => {
    it('returns one key without its value, and logs reads of keys', async () => {
      const app = await service.createApplication(privateApp())
      const created = (await service.request('POST', keysPath(app.id))).body
      const response = await service.request('GET', `${keysPath(app.id)}/${created.id}`)
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ id: created.id, created_by: adminId, created_at: created.created_at })
      await service.request('GET', keysPath(app.id))
      expect(await messagesOf(app.id)).toEqual(expect.arrayContaining([`Application key ${created.id} retrieved`, 'Application keys listed']))
    })

    it('answers 404 for an unknown or malformed key id, and for a key of another application', async () => {
      const app = await service.createApplication(privateApp())
      const other = await service.createApplication(privateApp())
      const otherKey = (await service.request('POST', keysPath(other.id))).body
      expect((await service.request('GET', `${keysPath(app.id)}/${UNKNOWN_ID}`)).status).toBe(404)
      expect((await service.request('GET', `${keysPath(app.id)}/nope`)).status).toBe(404)
      expect((await service.request('GET', `${keysPath(app.id)}/${otherKey.id}`)).status).toBe(404)
    })
  })

  describe('DELETE /applications/{id}/keys/{keyId}', () => {
    it('refuses that key at once, even after it was used, while the other keys keep working', async () => {
      const app = await service.createApplication(privateApp())
      const second = (await service.request('POST', keysPath(app.id))).body
      expect(await statusWith(second.key)).toBe(200)
      expect(await statusWith(app.key)).toBe(200)
      expect((await service.request('DELETE', `${keysPath(app.id)}/${second.id}`)).status).toBe(204)
      expect(await statusWith(second.key)).toBe(401)
      expect(await statusWith(app.key)).toBe(200)
      expect((await service.request('GET', `${keysPath(app.id)}/${second.id}`)).status).toBe(404)
      expect((await service.request('GET', keysPath(app.id))).body.map((key: { id: string }) => key.id)).not.toContain(second.id)
      expect(await messagesOf(app.id)).toContain(`Application key ${second.id} deleted`)
    })

    it('may delete the last key: the application stays, with no key', async () => {
      const app = await service.createApplication(privateApp())
      const [only] = (await service.request('GET', keysPath(app.id))).body
      expect((await service.request('DELETE', `${keysPath(app.id)}/${only.id}`)).status).toBe(204)
      expect(await statusWith(app.key)).toBe(401)
      expect((await service.request('GET', `/applications/${app.id}`)).body.keys).toEqual([])
    })

    it('answers 404 for an unknown key, a key already deleted or a key of another application, and 403 without application:update', async () => {
      const app = await service.createApplication(privateApp())
      const other = await service.createApplication(privateApp())
      const [otherKey] = (await service.request('GET', keysPath(other.id))).body
      expect((await service.request('DELETE', `${keysPath(app.id)}/${UNKNOWN_ID}`)).status).toBe(404)
      expect((await service.request('DELETE', `${keysPath(app.id)}/${otherKey.id}`)).status).toBe(404)
      expect(await statusWith(other.key)).toBe(200)
      const reader = await service.createApplication({ name: 'Reader', type: 'management', permissions: ['application:read'] })
      expect((await service.request('DELETE', `${keysPath(other.id)}/${otherKey.id}`, { key: reader.key })).status).toBe(403)
      expect((await service.request('DELETE', `${keysPath(other.id)}/${otherKey.id}`)).status).toBe(204)
      expect((await service.request('DELETE', `${keysPath(other.id)}/${otherKey.id}`)).status).toBe(404)
    })
  })

  describe('create_key and regenerate', () => {
    it('creates an application without a key when create_key is false; keys are added later', async () => {
      const response = await service.request('POST', '/applications', { body: privateApp({ create_key: false }) })
      expect(response.status).toBe(201)
      expect(response.body).not.toHaveProperty('key')
      expect(response.body.keys).toEqual([])
      expect(await messagesOf(response.body.id)).toEqual(['Application created without a key'])
      const added = (await service.request('POST', keysPath(response.body.id))).body
      expect(await statusWith(added.key)).toBe(200)
    })

    it('rejects a create_key that is not a boolean with 400 naming the field', async () => {
      const response = await service.request('POST', '/applications', { body: privateApp({ create_key: 'yes' }) })
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(JSON.stringify(response.body)).toContain('create_key')
    })

    it('regenerates as "a new key, every other key deleted"', async () => {
      const app = await service.createApplication(privateApp())
      const second = (await service.request('POST', keysPath(app.id))).body
      expect(await statusWith(second.key)).toBe(200)
      const regenerated = await service.request('POST', `/applications/${app.id}/regenerate`)
      expect(regenerated.status).toBe(200)
      expect(regenerated.body.keys).toEqual([{ id: expect.stringMatching(UUID), key: regenerated.body.key, created_by: adminId, created_at: expect.any(String) }])
      expect(await statusWith(app.key)).toBe(401)
      expect(await statusWith(second.key)).toBe(401)
      expect(await statusWith(regenerated.body.key)).toBe(200)
      expect((await service.request('GET', keysPath(app.id))).body.map((key: { id: string }) => key.id)).toEqual([regenerated.body.keys[0].id])
    })

    it('lists applications with their keys, without values', async () => {
      const app = await service.createApplication(privateApp())
      await service.request('POST', keysPath(app.id))
      const listed = (await service.request('GET', `/applications?id=${app.id}`)).body.data[0]
      expect(listed.keys).toHaveLength(2)
      for (const key of listed.keys) expect(key).not.toHaveProperty('key')
    })
  })
})
