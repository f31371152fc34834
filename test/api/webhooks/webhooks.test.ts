/**
 * Webhooks over HTTP: create, list, get, replace and delete with Basis Theory's
 * shapes, at most five per tenant, unknown event types refused naming the field,
 * the `webhook:*` permissions, the published signing key, and the delivery log.
 * Runs on both engines.
 */
import { createPublicKey } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { onPostgres } from '../../helpers/postgres'
import { startTestService, type TestService } from '../../helpers/service'

const WEBHOOK = { name: 'Orders', url: 'https://hooks.example.com/tessera', events: ['token.created', 'token.deleted'] }

describe('webhooks', () => {
  let service: TestService

  beforeAll(async () => {
    service = await startTestService()
  })
  afterAll(() => service.stop())

  const request = (method: string, path: string, body?: unknown, key?: string) => service.request(method, path, { body, key })

  beforeEach(async () => {
    const list = await request('GET', '/webhooks?size=100')
    for (const webhook of list.body.data) await request('DELETE', `/webhooks/${webhook.id}`)
  })

  it('creates a webhook with any https URL and answers with Basis Theory’s fields', async () => {
    const created = await request('POST', '/webhooks', { ...WEBHOOK, notify_email: 'ops@example.com' })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant_id: service.tenantId,
      status: 'enabled',
      name: 'Orders',
      url: WEBHOOK.url,
      notify_email: 'ops@example.com',
      events: ['token.created', 'token.deleted'],
      created_by: expect.any(String),
      created_at: '2026-11-25T12:00:00.000Z'
    })
    expect((await request('GET', `/webhooks/${created.body.id}`)).body).toEqual(created.body)
  })

  it('lists webhooks oldest first in a page', async () => {
    const first = (await request('POST', '/webhooks', { ...WEBHOOK, name: 'First' })).body
    service.clock.advance(1000)
    const second = (await request('POST', '/webhooks', { ...WEBHOOK, name: 'Second' })).body
    const list = await request('GET', '/webhooks')
    expect(list.status).toBe(200)
    expect(list.body.data.map((webhook: { id: string }) => webhook.id)).toEqual([first.id, second.id])
    expect(list.body.pagination).toMatchObject({ total_items: 2, page_number: 1, page_size: 20, total_pages: 1 })
  })

  it('PUT replaces every field and records who modified it', async () => {
    const created = (await request('POST', '/webhooks', { ...WEBHOOK, notify_email: 'ops@example.com' })).body
    const replaced = await request('PUT', `/webhooks/${created.id}`, { name: 'Renamed', url: 'http://127.0.0.1:9/hook', events: ['application.created'] })
    expect(replaced.status).toBe(200)
    expect(replaced.body).toMatchObject({ id: created.id, name: 'Renamed', url: 'http://127.0.0.1:9/hook', events: ['application.created'], modified_by: expect.any(String), modified_at: expect.any(String) })
    expect(replaced.body.notify_email).toBeUndefined()
    expect((await request('GET', `/webhooks/${created.id}`)).body).toEqual(replaced.body)
  })

  it('deletes a webhook: then it is a 404', async () => {
    const created = (await request('POST', '/webhooks', WEBHOOK)).body
    expect((await request('DELETE', `/webhooks/${created.id}`)).status).toBe(204)
    expect((await request('GET', `/webhooks/${created.id}`)).status).toBe(404)
    expect((await request('DELETE', `/webhooks/${created.id}`)).status).toBe(404)
    expect((await request('PUT', `/webhooks/${created.id}`, WEBHOOK)).status).toBe(404)
  })

  it('refuses a sixth webhook with a 422', async () => {
    for (let n = 1; n <= 5; n++) expect((await request('POST', '/webhooks', { ...WEBHOOK, name: `Hook ${n}` })).status).toBe(201)
    const sixth = await request('POST', '/webhooks', { ...WEBHOOK, name: 'Hook 6' })
    expect(sixth.status).toBe(422)
    expect(sixth.headers.get('content-type')).toContain('application/problem+json')
    expect((await request('GET', '/webhooks')).body.pagination.total_items).toBe(5)
  })

  it('refuses an unknown event type with a 400 naming it', async () => {
    const refused = await request('POST', '/webhooks', { ...WEBHOOK, events: ['token.created', 'token.exploded'] })
    expect(refused.status).toBe(400)
    expect(Object.keys(refused.body.errors)).toEqual(['events[1]'])
  })

  it.each([
    ['a non-http URL', { url: 'ftp://example.com/x' }, 'url'],
    ['a URL with credentials', { url: 'https://user:pw@example.com/x' }, 'url'],
    ['no events', { events: [] }, 'events'],
    ['an empty name', { name: ' ' }, 'name'],
    ['a bad e-mail', { notify_email: 'nope' }, 'notify_email']
  ])('refuses %s with a 400 naming the field', async (_what, change, field) => {
    const refused = await request('POST', '/webhooks', { ...WEBHOOK, ...change })
    expect(refused.status).toBe(400)
    expect(Object.keys(refused.body.errors)).toContain(field)
  })

  it('answers the event types as an array of names', async () => {
    const types = await request('GET', '/webhooks/event-types')
    expect(types.status).toBe(200)
    expect(types.body).toEqual(expect.arrayContaining(['token.created', 'token.updated', 'token.deleted', 'application.created', 'session.created', 'tenant.member.deleted', 'tenant.invitation.created']))
  })

  it('needs the webhook permissions', async () => {
    const created = (await request('POST', '/webhooks', WEBHOOK)).body
    const readOnly = (await service.createApplication({ name: 'Reader', type: 'management', permissions: ['webhook:read'] })).key
    expect((await request('GET', `/webhooks/${created.id}`, undefined, readOnly)).status).toBe(200)
    expect((await request('POST', '/webhooks', WEBHOOK, readOnly)).status).toBe(403)
    expect((await request('PUT', `/webhooks/${created.id}`, WEBHOOK, readOnly)).status).toBe(403)
    expect((await request('DELETE', `/webhooks/${created.id}`, undefined, readOnly)).status).toBe(403)
    const none = (await service.createApplication({ name: 'Other', type: 'management', permissions: ['log:read'] })).key
    expect((await request('GET', '/webhooks', undefined, none)).status).toBe(403)
    expect((await request('GET', `/webhooks/${created.id}/deliveries`, undefined, none)).status).toBe(403)
  })

  it('lists the webhook permissions in the catalogue', async () => {
    const management = await request('GET', '/permissions?application_type=management')
    expect(management.body).toEqual(expect.arrayContaining(['webhook:create', 'webhook:read', 'webhook:update', 'webhook:delete']))
  })

  it('publishes the signing key without an API key, the same every time', async () => {
    const first = await service.request('GET', '/webhooks/signing-key', { key: null })
    expect(first.status).toBe(200)
    expect(first.headers.get('content-type')).toContain('application/x-pem-file')
    const key = createPublicKey(first.body as string)
    expect(key.asymmetricKeyType).toBe('rsa')
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048)
    expect((await service.request('GET', '/webhooks/signing-key', { key: null })).body).toBe(first.body)
  })

  it.skipIf(onPostgres)('stores the private signing key sealed: no PEM private key in the database file or its WAL', async () => {
    expect((await service.request('GET', '/webhooks/signing-key', { key: null })).status).toBe(200)
    const files = await readdir(service.dataDir, { withFileTypes: true })
    for (const file of files.filter((entry) => entry.isFile())) {
      const bytes = await readFile(join(service.dataDir, file.name))
      expect(bytes.includes(Buffer.from('PRIVATE KEY')), file.name).toBe(false)
    }
  })

  it('keeps its signing key sealed across a data-key rotation and the old version’s retirement', async () => {
    const before = (await service.request('GET', '/webhooks/signing-key', { key: null })).body
    const keys = () => service.host.vault.services.keys
    const actor = { userId: service.ownerUserId, via: 'test' }
    const { current_version: version } = await keys().rotate(actor, service.tenantId)
    while ((await keys().reencrypt(100)) > 0);
    await keys().retire(actor, service.tenantId, version - 1)
    await service.pause()
    await service.resume()
    expect((await service.request('GET', '/webhooks/signing-key', { key: null })).body).toBe(before)
  })

  it('answers an empty delivery log for a new webhook, and 404 for an unknown one', async () => {
    const created = (await request('POST', '/webhooks', WEBHOOK)).body
    const log = await request('GET', `/webhooks/${created.id}/deliveries`)
    expect(log.status).toBe(200)
    expect(log.body).toEqual({ pagination: { total_items: 0, page_number: 1, page_size: 20, total_pages: 0 }, data: [] })
    expect((await request('GET', '/webhooks/00000000-0000-4000-8000-000000000000/deliveries')).status).toBe(404)
    expect((await request('GET', `/webhooks/${created.id}/deliveries?status=lost`)).status).toBe(400)
  })
})
