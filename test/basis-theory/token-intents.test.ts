/**
 * Token intents through Basis Theory's official SDK, with nothing but the base
 * URL and an API key: create, get, delete, and convert into a token with
 * `tokens.create({ tokenIntentId })`.
 */
import { BasisTheoryClient } from '@basis-theory/node-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'
import { cardNumber } from '../helpers/tokens'

const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']

describe('token intents through the Basis Theory SDK', () => {
  let service: TestService
  let client: BasisTheoryClient
  let browser: BasisTheoryClient
  beforeAll(async () => {
    service = await startTestService()
    const { key } = await service.createApplication({ name: 'Backend', type: 'private', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: CRUD }] })
    client = new BasisTheoryClient({ apiKey: key, environment: service.url })
    const publicApp = await service.createApplication({ name: 'Checkout page', type: 'public', permissions: ['token:create'] })
    browser = new BasisTheoryClient({ apiKey: publicApp.key, environment: service.url })
  })
  afterAll(() => service.stop())

  const card = () => ({ number: cardNumber(), expiration_month: 11, expiration_year: 2029, cvc: '123' })

  it('creates a card intent and shows its masked details and fingerprint, never the data', async () => {
    const data = card()
    const intent = await browser.tokenIntents.create({ type: 'card', data })
    expect(intent).toMatchObject({
      id: expect.any(String),
      type: 'card',
      tenantId: service.tenantId,
      fingerprint: expect.any(String),
      card: { bin: data.number.slice(0, 6), last4: data.number.slice(-4), expirationMonth: 11, expirationYear: 2029 },
      createdAt: expect.any(Date),
      expiresAt: expect.any(Date)
    })
    expect(JSON.stringify(intent)).not.toContain(data.number)
  })

  it('creates a bank intent', async () => {
    const intent = await client.tokenIntents.create({ type: 'bank', data: { routing_number: '021000021', account_number: '000123456789' } })
    expect(intent.bank).toEqual({ routingNumber: '021000021', accountNumberLast4: '6789' })
  })

  it('gets an intent, deletes it, and then finds it no more (NotFoundError)', async () => {
    const intent = await browser.tokenIntents.create({ type: 'card', data: card() })
    const read = await client.tokenIntents.get(intent.id!)
    expect(read).toMatchObject({ id: intent.id, type: 'card', fingerprint: intent.fingerprint, card: intent.card })
    await client.tokenIntents.delete(intent.id!)
    await expect(client.tokenIntents.get(intent.id!)).rejects.toMatchObject({ statusCode: 404 })
  })

  it('converts an intent into a token with tokens.create({ tokenIntentId }), once', async () => {
    const data = card()
    const intent = await browser.tokenIntents.create({ type: 'card', data })
    const token = await client.tokens.create({ tokenIntentId: intent.id, metadata: { customer: 'c-42' } })
    expect(token).toMatchObject({ type: 'card', fingerprint: intent.fingerprint, metadata: { customer: 'c-42' } })
    expect((await client.tokens.get(token.id!)).data).toEqual(data)
    await expect(client.tokenIntents.get(intent.id!)).rejects.toMatchObject({ statusCode: 404 })
    await expect(client.tokens.create({ tokenIntentId: intent.id })).rejects.toMatchObject({ statusCode: 400 })
  })

  it('refuses a public application reading an intent (ForbiddenError)', async () => {
    const intent = await browser.tokenIntents.create({ type: 'card', data: card() })
    await expect(browser.tokenIntents.get(intent.id!)).rejects.toMatchObject({ statusCode: 403 })
  })
})
