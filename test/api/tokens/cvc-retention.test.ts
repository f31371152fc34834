/**
 * CVC retention (PCI DSS 3.3.1.2): a card's cvc is kept for a retention window,
 * then the expiry sweep removes it from the stored data, audited; with a window
 * of 0 it is never stored. Driven over HTTP with the test clock.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openJson } from '../../../src/main/crypto/aead'
import { parseCvcRetention } from '../../../src/main/domain/cvc-retention'
import { unlockKeyring } from '../../../src/main/app/keyring'
import { tokenAssociatedData } from '../../../src/main/app/token-crypto'
import { startTestService, type TestService } from '../../helpers/service'
import { cardNumber, MERGE_PATCH } from '../../helpers/tokens'
import { readerOf, sql } from '../../../src/main/storage/connections'
import { openVaultFile } from '../../helpers/database'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']
/** Reads reveal the plaintext, so a test can see whether the cvc is still there. */
const REVEALING_APP = { name: 'Checkout', type: 'private', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: CRUD }] }

const card = (cvc: string, number = cardNumber()) => ({ number, expiration_month: 12, expiration_year: 2030, cvc })

describe('CVC retention', () => {
  let service: TestService
  let key: string

  beforeAll(async () => {
    service = await startTestService()
    key = (await service.createApplication(REVEALING_APP)).key
    // Every sweep's first run, so each test starts from a known state.
    await service.host.vault.services.jobs.runDueJobs()
  })
  afterAll(() => service.stop())

  const request = (method: string, path: string, body?: unknown) => service.request(method, path, { key, body, contentType: method === 'PATCH' ? MERGE_PATCH : undefined })
  const cvcSweep = async () => (await service.host.vault.services.jobs.runDueJobs()).find((result) => result.name === 'expire-cvc')?.processed
  const logsOf = async (id: string) => (await service.request('GET', `/logs?entity_type=card&entity_id=${id}`)).body.data as Array<Record<string, unknown>>

  it('keeps the cvc for an hour by default, then the sweep removes it and logs it once', async () => {
    const created = await request('POST', '/tokens', { type: 'card', data: card('737') })
    expect(created.status).toBe(201)
    const { id, fingerprint } = created.body
    expect((await request('GET', `/tokens/${id}`)).body.data.cvc).toBe('737')

    service.clock.advance(HOUR - MINUTE)
    expect(await cvcSweep()).toBe(0)
    expect((await request('GET', `/tokens/${id}`)).body.data.cvc).toBe('737')

    service.clock.advance(2 * MINUTE)
    expect(await cvcSweep()).toBe(1)
    const read = await request('GET', `/tokens/${id}`)
    expect(read.body.data).toEqual({ number: created.body.data.number, expiration_month: 12, expiration_year: 2030 })
    expect(read.body.fingerprint).toBe(fingerprint)

    const removals = (await logsOf(id)).filter((entry) => entry.message === 'CVC removed after retention window')
    expect(removals).toEqual([expect.objectContaining({ operation: 'update', entity_type: 'card', entity_id: id })])
    expect(removals[0].actor_id).toBeUndefined()
    service.clock.advance(2 * MINUTE)
    expect(await cvcSweep()).toBe(0)
  })

  it('keeps fingerprints and deduplication working after the cvc is gone', async () => {
    const data = card('4242')
    const first = await request('POST', '/tokens', { type: 'card', data })
    service.clock.advance(HOUR + MINUTE)
    expect(await cvcSweep()).toBe(1)
    const again = await request('POST', '/tokens', { type: 'card', data, deduplicate_token: true })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ id: first.body.id, fingerprint: first.body.fingerprint })
    expect(again.body.data.cvc).toBeUndefined()
  })

  it('removes the cvc of cards created by tokenize too, in batches past the sweep size', async () => {
    const body = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`card${i}`, { type: 'card', data: card('123') }]))
    const tokenized = await request('POST', '/tokenize', body)
    expect(tokenized.status).toBe(200)
    service.clock.advance(HOUR + MINUTE)
    expect(await cvcSweep()).toBe(3)
    for (const { id } of Object.values(tokenized.body) as Array<{ id: string }>) {
      expect((await request('GET', `/tokens/${id}`)).body.data.cvc).toBeUndefined()
    }
  })

  it('starts a new window for a cvc set by a patch and keeps the deadline through other changes', async () => {
    const created = await request('POST', '/tokens', { type: 'card', data: { number: cardNumber(), expiration_month: 1, expiration_year: 2031 } })
    const id = created.body.id
    service.clock.advance(HOUR)
    expect((await request('PATCH', `/tokens/${id}`, { data: { cvc: '555' } })).status).toBe(200)
    service.clock.advance(30 * MINUTE)
    expect((await request('PATCH', `/tokens/${id}`, { data: { expiration_month: 2 }, metadata: { note: 'moved' } })).status).toBe(200)
    expect(await cvcSweep()).toBe(0)
    service.clock.advance(31 * MINUTE)
    expect(await cvcSweep()).toBe(1)
    expect((await request('GET', `/tokens/${id}`)).body.data).toMatchObject({ expiration_month: 2 })
    expect((await request('GET', `/tokens/${id}`)).body.data.cvc).toBeUndefined()
  })

  it('clears the mark of a card stored before CVC retention that holds no cvc, without an audit entry', async () => {
    const created = await request('POST', '/tokens', { type: 'card', data: { number: cardNumber(), expiration_month: 5, expiration_year: 2032 } })
    // The upgrade marks every card already stored as due, cvc or not.
    await sql(service.host.vault.db.writer)('tokens').where({ id: created.body.id }).update({ cvc_expires_at: service.clock.now() })
    service.clock.advance(MINUTE)
    expect(await cvcSweep()).toBe(1)
    expect((await request('GET', `/tokens/${created.body.id}`)).body.data).toMatchObject({ expiration_month: 5 })
    expect((await logsOf(created.body.id)).map((entry) => entry.message)).toEqual(['Token retrieved', 'Token created'])
    service.clock.advance(MINUTE)
    expect(await cvcSweep()).toBe(0)
  })

  it('forgets the deadline when a patch removes the cvc itself', async () => {
    const created = await request('POST', '/tokens', { type: 'card', data: card('808') })
    expect((await request('PATCH', `/tokens/${created.body.id}`, { data: { cvc: null } })).body.data.cvc).toBeUndefined()
    service.clock.advance(2 * HOUR)
    expect(await cvcSweep()).toBe(0)
    expect((await logsOf(created.body.id)).map((entry) => entry.message)).not.toContain('CVC removed after retention window')
  })
})

describe('CVC retention of 0', () => {
  let service: TestService
  let key: string
  const CVC = '9173'

  beforeAll(async () => {
    service = await startTestService({ cvcRetentionMs: 0 })
    key = (await service.createApplication(REVEALING_APP)).key
  })
  afterAll(() => service.stop())

  it('never stores the cvc: not in responses, not in the sealed data, not in the files', async () => {
    const created = await service.request('POST', '/tokens', { key, body: { type: 'card', data: card(CVC) } })
    expect(created.status).toBe(201)
    expect(created.body.data.cvc).toBeUndefined()
    const patched = await service.request('PATCH', `/tokens/${created.body.id}`, { key, body: { data: { cvc: CVC } }, contentType: MERGE_PATCH })
    expect(patched.body.data.cvc).toBeUndefined()
    const tokenized = await service.request('POST', '/tokenize', { key, body: { c: { type: 'card', data: card(CVC) } } })
    expect(tokenized.body.c.data.cvc).toBeUndefined()
    expect((await service.request('GET', `/tokens/${created.body.id}`, { key })).body.data).toMatchObject({ expiration_year: 2030 })

    // Open every stored ciphertext straight from the database file with the vault's keys.
    await service.host.stop()
    const direct = openVaultFile(service.dataDir)
    try {
      const keyring = await unlockKeyring(readerOf(direct), service.masterKey)
      const rows = await direct('tokens')
        .join('tenants', 'tenants.tenant_key', 'tokens.tenant_key')
        .select({ tenant_id: 'tenants.id' }, 'tokens.id', 'key_version', 'sealed_data', 'cvc_expires_at')
      expect(rows).toHaveLength(2)
      for (const row of rows) {
        const data = openJson<Record<string, unknown>>(keyring.dataKey(row.tenant_id, row.key_version), row.sealed_data, tokenAssociatedData(row.tenant_id, row.id))
        expect(data).toMatchObject({ expiration_month: 12 })
        expect(data).not.toHaveProperty('cvc')
        expect(row.cvc_expires_at).toBeNull()
      }
    } finally {
      await direct.destroy()
    }
    for (const name of await readdir(service.dataDir)) {
      expect((await readFile(join(service.dataDir, name))).includes(`"${CVC}"`), name).toBe(false)
    }
  })
})

describe('TESSERA_CVC_RETENTION', () => {
  it('takes whole seconds or an ISO 8601 duration, one hour when unset', () => {
    expect(parseCvcRetention(undefined)).toBe(HOUR)
    expect(parseCvcRetention('')).toBe(HOUR)
    expect(parseCvcRetention('0')).toBe(0)
    expect(parseCvcRetention('900')).toBe(15 * MINUTE)
    expect(parseCvcRetention('PT15M')).toBe(15 * MINUTE)
    expect(parseCvcRetention('pt2h')).toBe(2 * HOUR)
    expect(parseCvcRetention('P1D')).toBe(24 * HOUR)
  })

  it.each(['-1', '1.5', '1h', 'PT', 'forever', 'P2D', '86401'])('refuses %s, naming the variable and the accepted forms', (value) => {
    expect(() => parseCvcRetention(value)).toThrow(/TESSERA_CVC_RETENTION must be a whole number of seconds .* or an ISO 8601 duration/)
  })
})
