/**
 * Basis Theory's official Node SDK against Tessera, with nothing but the base
 * URL and an API key: the SDK sends its key as BT-API-KEY.
 */
import { BasisTheoryClient } from '@basis-theory/node-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'

describe('the Basis Theory SDK', () => {
  let service: TestService
  let client: BasisTheoryClient
  beforeAll(async () => {
    service = await startTestService()
    const { key } = await service.createApplication({ name: 'SDK', type: 'private', permissions: ['token:create', 'token:read'] })
    client = new BasisTheoryClient({ apiKey: key, environment: service.url })
  })
  afterAll(() => service.stop())

  it('authenticates with the key it sends as BT-API-KEY: creates a token and reads it back', async () => {
    const created = await client.tokens.create({ type: 'token', data: 'Sensitive Value' })
    expect(created.id).toEqual(expect.any(String))
    const read = await client.tokens.get(created.id!)
    expect(read.id).toBe(created.id)
  })

  it('is refused (401) with a key Tessera does not know', async () => {
    const stranger = new BasisTheoryClient({ apiKey: 'key_private_unknown', environment: service.url })
    await expect(stranger.tokens.get('anything')).rejects.toMatchObject({ statusCode: 401 })
  })

  it('refuses a request carrying two different keys, one in each header', async () => {
    const { key } = await service.createApplication({ name: 'Other', type: 'private', permissions: ['token:read'] })
    const response = await service.request('GET', '/tokens', { headers: { 'bt-api-key': key } })
    expect(response.status).toBe(401)
  })
})
