/**
 * Basis Theory's official Node SDK with `requestOptions.idempotencyKey` (sent as
 * BT-IDEMPOTENCY-KEY): a retried create gets the first token back instead of a second.
 */
import { BasisTheoryClient } from '@basis-theory/node-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'

describe('the Basis Theory SDK with an idempotency key', () => {
  let service: TestService
  let client: BasisTheoryClient
  let key: string
  beforeAll(async () => {
    service = await startTestService()
    key = (await service.createApplication({ name: 'SDK', type: 'private', permissions: ['token:create', 'token:read'] })).key
    client = new BasisTheoryClient({ apiKey: key, environment: service.url })
  })
  afterAll(() => service.stop())

  it('creates one token when the same create is sent twice under one key', async () => {
    const request = { type: 'token', data: 'Sent twice', metadata: { order: '1017' } }
    const first = await client.tokens.create(request, { idempotencyKey: 'order-1017' })
    const retry = await client.tokens.create(request, { idempotencyKey: 'order-1017' })
    expect(retry.id).toBe(first.id)
    // Counted over HTTP: the SDK's only list is v2.
    const listed = await service.request('GET', '/tokens?metadata.order=1017', { key })
    expect(listed.body.data.map((token: { id: string }) => token.id)).toEqual([first.id])
  })

  it('creates a new token under a new key', async () => {
    const request = { type: 'token', data: 'Sent under two keys' }
    const first = await client.tokens.create(request, { idempotencyKey: 'first-key' })
    const second = await client.tokens.create(request, { idempotencyKey: 'second-key' })
    expect(second.id).not.toBe(first.id)
  })

  it('is refused (422) when the key was used for another request', async () => {
    await client.tokens.create({ type: 'token', data: 'One' }, { idempotencyKey: 'reused-key' })
    await expect(client.tokens.create({ type: 'token', data: 'Two' }, { idempotencyKey: 'reused-key' })).rejects.toMatchObject({ statusCode: 422 })
  })
})
