/**
 * Webhooks through Basis Theory's official SDK, with nothing but the base URL
 * and a management key: create, get, list, update (a replacement), delete, and
 * the event types; a sixth webhook and an unknown event type are refused.
 */
import { BasisTheoryClient } from '@basis-theory/node-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'

describe('webhooks through the Basis Theory SDK', () => {
  let service: TestService
  let client: BasisTheoryClient

  beforeAll(async () => {
    service = await startTestService()
    const { key } = await service.createApplication({ name: 'Ops', type: 'management', permissions: ['webhook:create', 'webhook:read', 'webhook:update', 'webhook:delete'] })
    client = new BasisTheoryClient({ apiKey: key, environment: service.url })
  })
  afterAll(() => service.stop())

  it('creates, gets, lists, replaces and deletes a webhook', async () => {
    const created = await client.webhooks.create({ name: 'Orders', url: 'https://hooks.example.com/bt', events: ['token.created'], notifyEmail: 'ops@example.com' })
    expect(created).toMatchObject({
      id: expect.any(String),
      tenantId: service.tenantId,
      status: 'enabled',
      name: 'Orders',
      url: 'https://hooks.example.com/bt',
      notifyEmail: 'ops@example.com',
      events: ['token.created'],
      createdBy: expect.any(String),
      createdAt: expect.any(Date)
    })
    expect(await client.webhooks.get(created.id)).toEqual(created)

    const list = await client.webhooks.list()
    expect(list.data.map((webhook) => webhook.id)).toContain(created.id)
    expect(list.pagination.pageSize).toBe(20)

    const updated = await client.webhooks.update(created.id, { name: 'Orders v2', url: 'http://127.0.0.1:8080/hook', events: ['token.updated', 'token.deleted'] })
    expect(updated).toMatchObject({ id: created.id, name: 'Orders v2', url: 'http://127.0.0.1:8080/hook', events: ['token.updated', 'token.deleted'], modifiedBy: expect.any(String), modifiedAt: expect.any(Date) })
    expect(updated.notifyEmail).toBeUndefined()

    await client.webhooks.delete(created.id)
    await expect(client.webhooks.get(created.id)).rejects.toMatchObject({ statusCode: 404 })
  })

  it('lists the event types as names', async () => {
    const types = await client.webhooks.events.list()
    expect(types).toEqual(expect.arrayContaining(['token.created', 'token.updated', 'token.deleted', 'application.created', 'session.created', 'tenant.invitation.created']))
  })

  it('refuses an unknown event type (400) and a sixth webhook (422)', async () => {
    await expect(client.webhooks.create({ name: 'Bad', url: 'https://hooks.example.com/x', events: ['token.exploded'] })).rejects.toMatchObject({ statusCode: 400 })
    const ids: string[] = []
    for (let n = 0; n < 5; n++) ids.push((await client.webhooks.create({ name: `Hook ${n}`, url: 'https://hooks.example.com/x', events: ['token.created'] })).id)
    await expect(client.webhooks.create({ name: 'Sixth', url: 'https://hooks.example.com/x', events: ['token.created'] })).rejects.toMatchObject({ statusCode: 422 })
    for (const id of ids) await client.webhooks.delete(id)
  })

  it('answers ping', async () => {
    await expect(client.webhooks.ping()).resolves.toBeUndefined()
  })
})
