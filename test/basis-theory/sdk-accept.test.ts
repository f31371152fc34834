/**
 * What Basis Theory accepts, Tessera accepts: the official SDK with only its
 * base URL and key, on the calls its README and integration tests make first.
 */
import { BasisTheoryClient, BasisTheoryError } from '@basis-theory/node-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'
import { cardNumber } from '../helpers/tokens'

describe('the Basis Theory SDK', () => {
  let service: TestService
  let tokens: BasisTheoryClient
  let management: BasisTheoryClient
  beforeAll(async () => {
    service = await startTestService()
    const { key } = await service.createApplication({ name: 'SDK', type: 'private', permissions: ['token:create', 'token:read'] })
    tokens = new BasisTheoryClient({ apiKey: key, environment: service.url })
    const admin = await service.createApplication({ name: 'SDK admin', type: 'management', permissions: ['tenant:read', 'tenant:update'] })
    management = new BasisTheoryClient({ apiKey: admin.key, environment: service.url })
  })
  afterAll(() => service.stop())

  describe('tenants.self', () => {
    it('get() reads the tenant', async () => {
      const tenant = await management.tenants.self.get()
      expect(tenant).toMatchObject({ id: service.tenantId, name: 'Test tenant', ownerId: service.ownerUserId, settings: {} })
      expect(tenant.createdAt).toBeInstanceOf(Date)
    })

    it('update() renames it', async () => {
      const renamed = await management.tenants.self.update({ name: 'Renamed by the SDK' })
      expect(renamed).toMatchObject({ id: service.tenantId, name: 'Renamed by the SDK' })
      expect((await management.tenants.self.get()).name).toBe('Renamed by the SDK')
    })

    it('get() without tenant:read is a ForbiddenError', async () => {
      await expect(tokens.tenants.self.get()).rejects.toMatchObject({ statusCode: 403 })
    })
  })

  it('webhooks.ping() answers', async () => {
    await expect(tokens.webhooks.ping()).resolves.toBeUndefined()
  })

  it('gets back the trace id it sends as its correlation id, and a generated one otherwise', async () => {
    const traced = new BasisTheoryClient({ apiKey: (await service.createApplication({ name: 'Traced', type: 'private', permissions: ['token:read'] })).key, environment: service.url, correlationId: 'sdk-trace-1' })
    const { rawResponse } = await traced.webhooks.ping().withRawResponse()
    expect(rawResponse.headers.get('bt-trace-id')).toBe('sdk-trace-1')
    const failure: unknown = await traced.tokens.get('no-such-token').catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(BasisTheoryError)
    expect((failure as BasisTheoryError).rawResponse?.headers.get('bt-trace-id')).toBe('sdk-trace-1')
    const untraced = await tokens.webhooks.ping().withRawResponse()
    expect(untraced.rawResponse.headers.get('bt-trace-id')).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('finds the correlation id it sends, for the client or one request, on the audit entries of its requests', async () => {
    const { key } = await service.createApplication({ name: 'Correlated', type: 'private', permissions: ['token:create', 'token:read'] })
    const correlated = new BasisTheoryClient({ apiKey: key, environment: service.url, correlationId: 'sdk-client-trace' })
    const created = await correlated.tokens.create({ type: 'token', data: 'correlated' })
    await correlated.tokens.get(created.id!, { correlationId: 'sdk-request-trace' })
    const logs = await service.request('GET', `/logs?entity_id=${created.id}`)
    expect(logs.body.data.map((entry: { operation: string; trace_id?: string }) => [entry.operation, entry.trace_id])).toEqual([
      ['read', 'sdk-request-trace'],
      ['create', 'sdk-client-trace']
    ])
  })

  describe('tokens.create', () => {
    it('accepts an expired card with a numeric cvc (stored as a string, never shown)', async () => {
      const number = cardNumber(16)
      const created = await tokens.tokens.create({ type: 'card', data: { number, expiration_month: 1, expiration_year: 2020, cvc: 123 } })
      expect(created.data).toEqual({ number: `${'X'.repeat(12)}${number.slice(-4)}`, expiration_month: 1, expiration_year: 2020 })
    })

    it('accepts metadata that shares words with the data', async () => {
      const created = await tokens.tokens.create({ type: 'token', data: 'Sensitive Value', metadata: { nonSensitiveField: 'Non-Sensitive Value' } })
      expect(created.metadata).toEqual({ nonSensitiveField: 'Non-Sensitive Value' })
    })

    it('refuses metadata holding the card number, with separators, as a BadRequestError naming the field', async () => {
      const number = cardNumber(16)
      const spaced = number.match(/\d{4}/g)!.join(' ')
      await expect(tokens.tokens.create({ type: 'card', data: { number }, metadata: { note: spaced } })).rejects.toMatchObject({
        statusCode: 400,
        body: { errors: { 'metadata.note': ['must not contain the token data'] } }
      })
    })

    it('refuses a cvc of the wrong length, as a number or a string', async () => {
      for (const cvc of [12, '12345']) {
        await expect(tokens.tokens.create({ type: 'card', data: { number: cardNumber(), cvc } })).rejects.toMatchObject({ statusCode: 400, body: { errors: { 'data.cvc': ['must be 3 or 4 digits'] } } })
      }
    })
  })
})
