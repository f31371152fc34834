/**
 * Token intents over HTTP: created with masked details and never the data,
 * read and deleted, converted into a token once only and atomically, swept
 * after their lifetime with an audit entry, and held to the token permissions
 * Basis Theory's `token-intent:*` map onto. Runs on both engines.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { onPostgres } from '../../helpers/postgres'
import { startTestService, type TestService } from '../../helpers/service'
import { cardNumber } from '../../helpers/tokens'

const HOUR = 3_600_000
const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']
const REVEALING_APP = { name: 'Checkout', type: 'private', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: CRUD }] }
const BANK = { routing_number: '021000021', account_number: '1234567890' }

describe('token intents', () => {
  let service: TestService
  let key: string

  beforeAll(async () => {
    service = await startTestService()
    key = (await service.createApplication(REVEALING_APP)).key
    await sweep()
  })
  afterAll(() => service.stop())

  const request = (method: string, path: string, body?: unknown, as = key) => service.request(method, path, { key: as, body })
  const createIntent = (body: unknown, as = key) => request('POST', '/token-intents', body, as)
  const card = (number = cardNumber()) => ({ number, expiration_month: 2, expiration_year: 2031, cvc: '737' })
  async function sweep(): Promise<number | undefined> {
    return (await service.host.vault.services.jobs.runDueJobs()).find((result) => result.name === 'expire-token-intents')?.processed
  }
  const logsOf = async (id: string) => (await service.request('GET', `/logs?entity_type=token-intent&entity_id=${id}`)).body.data as Array<Record<string, unknown>>

  describe('POST /token-intents', () => {
    it('answers 201 with the masked card details and the fingerprint a token of the card gets, never the data', async () => {
      const data = card()
      const created = await createIntent({ type: 'card', data })
      expect(created.status).toBe(201)
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        type: 'card',
        tenant_id: service.tenantId,
        fingerprint: expect.any(String),
        card: { bin: data.number.slice(0, 6), last4: data.number.slice(-4), expiration_month: 2, expiration_year: 2031 },
        created_by: expect.any(String),
        created_at: '2026-11-25T12:00:00.000Z',
        expires_at: '2026-11-25T13:00:00.000Z'
      })
      const text = JSON.stringify(created.body)
      expect(text).not.toContain(data.number)
      // The CVC as a value, string or number: random ids and the fingerprint's hex may hold the digits 737.
      expect(text).not.toMatch(/["[:,]\s*"?737"?\s*[,\]}]/)
      const token = await request('POST', '/tokens', { type: 'card', data: card(data.number) })
      expect(created.body.fingerprint).toBe(token.body.fingerprint)
    })

    it.skipIf(onPostgres)('stores the data sealed: neither the number nor the CVC is in the database file or its WAL', async () => {
      const data = { ...card(), cvc: '9317' }
      expect((await createIntent({ type: 'card', data })).status).toBe(201)
      const files = await readdir(service.dataDir, { withFileTypes: true })
      for (const file of files.filter((entry) => entry.isFile())) {
        const bytes = await readFile(join(service.dataDir, file.name))
        for (const secret of [data.number, `"cvc":"9317"`]) expect(bytes.includes(Buffer.from(secret)), `${secret} in ${file.name}`).toBe(false)
      }
    })

    it('lives 24 hours when it holds no CVC', async () => {
      const { number, expiration_month, expiration_year } = card()
      const created = await createIntent({ type: 'card', data: { number, expiration_month, expiration_year } })
      expect(created.body.expires_at).toBe('2026-11-26T12:00:00.000Z')
    })

    it('shows a bank account as its routing number and the last four digits of its number', async () => {
      const created = await createIntent({ type: 'bank', data: BANK })
      expect(created.status).toBe(201)
      expect(created.body.bank).toEqual({ routing_number: '021000021', account_number_last4: '7890' })
      expect(JSON.stringify(created.body)).not.toContain(BANK.account_number)
    })

    it('refuses invalid data and other types with a 400 naming the field', async () => {
      const badCard = await createIntent({ type: 'card', data: { number: '4242424242424241' } })
      expect(badCard.status).toBe(400)
      expect(badCard.headers.get('content-type')).toContain('application/problem+json')
      expect(Object.keys(badCard.body.errors)).toEqual(['data.number'])
      const otherType = await createIntent({ type: 'token', data: 'text' })
      expect(otherType.status).toBe(400)
      expect(Object.keys(otherType.body.errors)).toEqual(['type'])
      expect((await createIntent({ type: 'card', data: card(), metadata: {} })).body.errors).toHaveProperty('metadata')
      // Client-side encrypted payloads need keys a local vault does not hold.
      expect((await createIntent({ type: 'card', encrypted: 'eyJhbGciOi' })).body.errors).toHaveProperty('encrypted')
    })
  })

  describe('GET and DELETE /token-intents/{id}', () => {
    it('reads the intent back without its data, and forgets it once deleted', async () => {
      const data = card()
      const created = await createIntent({ type: 'card', data })
      const read = await request('GET', `/token-intents/${created.body.id}`)
      expect(read.status).toBe(200)
      expect(read.body).toEqual(created.body)
      expect(JSON.stringify(read.body)).not.toContain(data.number)
      expect((await request('DELETE', `/token-intents/${created.body.id}`)).status).toBe(204)
      expect((await request('GET', `/token-intents/${created.body.id}`)).status).toBe(404)
      expect((await request('DELETE', `/token-intents/${created.body.id}`)).status).toBe(404)
      const operations = (await logsOf(created.body.id)).map((entry) => entry.operation)
      expect(operations.sort()).toEqual(['create', 'delete', 'read'])
    })

    it('answers 404 for an unknown or malformed id', async () => {
      expect((await request('GET', '/token-intents/00000000-0000-4000-8000-000000000000')).status).toBe(404)
      expect((await request('GET', '/token-intents/not-an-id')).status).toBe(404)
    })
  })

  describe('POST /tokens with token_intent_id', () => {
    it('makes a token of the intent’s data with the request’s other fields, and consumes the intent', async () => {
      const data = card()
      const intent = await createIntent({ type: 'card', data })
      const converted = await request('POST', '/tokens', { token_intent_id: intent.body.id, metadata: { order: 'A-1' } })
      expect(converted.status).toBe(201)
      expect(converted.body).toMatchObject({ type: 'card', fingerprint: intent.body.fingerprint, metadata: { order: 'A-1' }, containers: ['/pci/high/'] })
      expect((await request('GET', `/tokens/${converted.body.id}`)).body.data).toEqual(data)
      expect((await request('GET', `/token-intents/${intent.body.id}`)).status).toBe(404)
      const entries = await logsOf(intent.body.id)
      expect(entries.find((entry) => entry.message === `Token intent converted into token ${converted.body.id}`)).toMatchObject({ operation: 'delete' })
    })

    it('converts an intent once only: a second conversion is a 400 naming token_intent_id', async () => {
      const intent = await createIntent({ type: 'bank', data: BANK })
      expect((await request('POST', '/tokens', { token_intent_id: intent.body.id })).status).toBe(201)
      const again = await request('POST', '/tokens', { token_intent_id: intent.body.id })
      expect(again.status).toBe(400)
      expect(Object.keys(again.body.errors)).toEqual(['token_intent_id'])
    })

    it('lets exactly one of two simultaneous conversions through', async () => {
      const intent = await createIntent({ type: 'bank', data: BANK })
      const results = await Promise.all([1, 2].map(() => request('POST', '/tokens', { token_intent_id: intent.body.id })))
      expect(results.map((result) => result.status).sort()).toEqual([201, 400])
    })

    it('keeps the intent when the token cannot be created, so nothing is lost', async () => {
      const taken = await request('POST', '/tokens', { type: 'token', data: 'x', id: 'taken-id' })
      expect(taken.status).toBe(201)
      const intent = await createIntent({ type: 'bank', data: BANK })
      expect((await request('POST', '/tokens', { token_intent_id: intent.body.id, id: 'taken-id' })).status).toBe(409)
      expect((await request('GET', `/token-intents/${intent.body.id}`)).status).toBe(200)
      expect((await request('POST', '/tokens', { token_intent_id: intent.body.id })).status).toBe(201)
    })

    it('refuses data beside the intent, another type, and an id that names no intent (400 naming the field)', async () => {
      const intent = await createIntent({ type: 'bank', data: BANK })
      const fieldsOf = async (body: unknown) => Object.keys((await request('POST', '/tokens', body)).body.errors ?? {})
      expect(await fieldsOf({ token_intent_id: intent.body.id, data: BANK })).toEqual(['data'])
      expect(await fieldsOf({ token_intent_id: intent.body.id, type: 'card' })).toEqual(['type'])
      expect(await fieldsOf({ token_intent_id: 'no such intent' })).toEqual(['token_intent_id'])
      expect(await fieldsOf({ token_intent_id: '00000000-0000-4000-8000-000000000000' })).toEqual(['token_intent_id'])
      expect((await request('POST', '/tokens', { token_intent_id: intent.body.id, type: 'bank' })).status).toBe(201)
    })
  })

  describe('expiry', () => {
    it('sweeps an intent after its lifetime, audited, and it can no longer be read or converted', async () => {
      const { number } = card()
      const intent = await createIntent({ type: 'card', data: { number } })
      service.clock.advance(24 * HOUR - 60_000)
      await sweep()
      expect((await request('GET', `/token-intents/${intent.body.id}`)).status).toBe(200)
      service.clock.advance(120_000)
      expect((await request('GET', `/token-intents/${intent.body.id}`)).status).toBe(404)
      expect((await request('POST', '/tokens', { token_intent_id: intent.body.id })).status).toBe(400)
      expect(await sweep()).toBeGreaterThanOrEqual(1)
      const expired = (await logsOf(intent.body.id)).find((entry) => entry.operation === 'expire')
      expect(expired).toMatchObject({ entity_type: 'token-intent', message: 'Token intent expired and deleted' })
      expect(expired!.actor_id).toBeUndefined()
    })
  })

  describe('key rotation', () => {
    it('counts intents under their key version, re-encrypts them, and retires a version only when none uses it', async () => {
      const keys = service.host.vault.services.keys
      const actor = { userId: service.ownerUserId, via: 'test' }
      const data = card()
      const intent = await createIntent({ type: 'card', data })
      const onVersion = async (version: number) => (await keys.status()).tenants[0].versions.find((entry) => entry.version === version)!.objects.token_intents
      const sealedOnOne = await onVersion(1)
      expect(sealedOnOne).toBeGreaterThanOrEqual(1)
      await keys.rotate(actor, service.tenantId)
      await expect(keys.retire(actor, service.tenantId, 1)).rejects.toMatchObject({ status: 409, message: expect.stringContaining(`${sealedOnOne} token intent`) })
      while ((await keys.reencrypt(500)) > 0);
      expect(await onVersion(1)).toBe(0)
      expect(await onVersion(2)).toBe(sealedOnOne)
      const report = await keys.retire(actor, service.tenantId, 1)
      expect(report.counts_after.token_intents).toEqual({ 1: 0, 2: sealedOnOne })
      const converted = await request('POST', '/tokens', { token_intent_id: intent.body.id })
      expect((await request('GET', `/tokens/${converted.body.id}`)).body.data).toEqual(data)
    })
  })

  describe('permissions', () => {
    it('lets a public application create and convert intents (token:create) but not read or delete them', async () => {
      const publicKey = (await service.createApplication({ name: 'Browser', type: 'public', permissions: ['token:create'] })).key
      const created = await createIntent({ type: 'card', data: card() }, publicKey)
      expect(created.status).toBe(201)
      expect((await request('GET', `/token-intents/${created.body.id}`, undefined, publicKey)).status).toBe(403)
      expect((await request('DELETE', `/token-intents/${created.body.id}`, undefined, publicKey)).status).toBe(403)
      // Converting makes a token, which the public application may create; it sees the card masked, as on any create.
      const converted = await request('POST', '/tokens', { token_intent_id: created.body.id }, publicKey)
      expect(converted.status).toBe(201)
      expect(converted.body.data.number).toMatch(/^X+\d{4}$/)
    })

    it('checks the permission on the containers a token of the type goes to by default', async () => {
      const generalOnly = (await service.createApplication({ name: 'General', type: 'private', rules: [{ priority: 1, container: '/general/', transform: 'redact', permissions: CRUD }] })).key
      expect((await createIntent({ type: 'card', data: card() }, generalOnly)).status).toBe(403)
      const intent = await createIntent({ type: 'card', data: card() })
      expect((await request('GET', `/token-intents/${intent.body.id}`, undefined, generalOnly)).status).toBe(403)
      expect((await request('POST', '/tokens', { token_intent_id: intent.body.id }, generalOnly)).status).toBe(403)
      expect((await request('POST', '/tokens', { token_intent_id: intent.body.id, containers: ['/general/cards/'] }, generalOnly)).status).toBe(201)
    })

    it('refuses a caller without the permission', async () => {
      const readOnly = (await service.createApplication({ name: 'Reader', type: 'private', permissions: ['token:read'] })).key
      expect((await createIntent({ type: 'bank', data: BANK }, readOnly)).status).toBe(403)
      expect((await createIntent({ type: 'bank', data: BANK }, service.adminKey)).status).toBe(403)
    })
  })
})
