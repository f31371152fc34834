/**
 * Data-key rotation on a running service: new writes use the new version at
 * once, the background pass moves every token, outbox mail and sealed setting
 * onto it, old tokens still read the same over HTTP, and a version is retired
 * only when nothing uses it, with a report that proves it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KeyRetirementReport, TenantKeyStatus } from '../../../src/shared/types'
import type { CeremonyActor } from '../../../src/main/app/keys.service'
import { SMTP_PASSWORD_SETTING } from '../../../src/main/app/sealed-settings.service'
import { startTestService, type TestService } from '../../helpers/service'
import { cardNumber, MERGE_PATCH } from '../../helpers/tokens'
import { sql } from '../../../src/main/storage/connections'

const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']

describe('data-key rotation', () => {
  let service: TestService
  let key: string
  let actor: CeremonyActor
  /** Every token created before the rotation, with the data it was created with. */
  const before = new Map<string, unknown>()

  const services = () => service.host.vault.services
  const tenant = async (): Promise<TenantKeyStatus> => (await services().keys.status()).tenants[0]
  const objectsOn = async (version: number) => (await tenant()).versions.find((entry) => entry.version === version)?.objects

  beforeAll(async () => {
    service = await startTestService()
    actor = { userId: service.ownerUserId, via: 'test' }
    key = (await service.createApplication({ name: 'Reader', type: 'private', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: CRUD }] })).key
    const bodies = [
      ...Array.from({ length: 20 }, () => ({ type: 'card', data: { number: cardNumber(), expiration_month: 3, expiration_year: 2031 } })),
      ...Array.from({ length: 5 }, (_, i) => ({ type: 'token', data: { note: `secret ${i}`, list: [i, i + 1] } })),
      { type: 'bank', data: { routing_number: '021000021', account_number: '1234567890' } }
    ]
    for (const body of bodies) {
      const created = await service.request('POST', '/tokens', { key, body })
      expect(created.status).toBe(201)
      before.set(created.body.id, body.data)
    }
    expect((await service.request('POST', '/tenants/self/invitations', { body: { email: 'ada@example.com' } })).status).toBe(201)
    await services().sealedSettings.put(service.tenantId, SMTP_PASSWORD_SETTING, 'hunter2')
  })
  afterAll(() => service.stop())

  it('starts on version 1 with every sealed object counted on it', async () => {
    expect(await tenant()).toMatchObject({ tenant_id: service.tenantId, current_version: 1, versions: [{ version: 1, current: true, key_check_value: expect.stringMatching(/^[0-9a-f]{16}$/) }] })
    expect(await objectsOn(1)).toEqual({ tokens: 26, outbox_mails: 1, sealed_settings: 1, token_intents: 0, idempotent_responses: 0 })
    expect((await tenant()).rotation).toBeUndefined()
  })

  it('makes new writes use the new version at once, before the pass has run', async () => {
    const rotated = await services().keys.rotate(actor, service.tenantId)
    expect(rotated).toMatchObject({ current_version: 2, rotation: { target_version: 2, total: 28, remaining: 28 } })
    expect(rotated.rotation!.finished_at).toBeUndefined()

    const fresh = await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'written during the rotation' } })
    const [patchedId, patchedData] = [...before][0]
    const patched = await service.request('PATCH', `/tokens/${patchedId}`, { key, body: { data: { expiration_month: 4 } }, contentType: MERGE_PATCH })
    expect(patched.status).toBe(200)
    before.set(patchedId, { ...(patchedData as object), expiration_month: 4 })
    expect(await objectsOn(2)).toEqual({ tokens: 2, outbox_mails: 0, sealed_settings: 0, token_intents: 0, idempotent_responses: 0 })
    expect(await objectsOn(1)).toEqual({ tokens: 25, outbox_mails: 1, sealed_settings: 1, token_intents: 0, idempotent_responses: 0 })
    expect((await service.request('GET', `/tokens/${fresh.body.id}`, { key })).body.data).toBe('written during the rotation')
  })

  it('refuses a second rotation while the first is re-encrypting', async () => {
    await expect(services().keys.rotate(actor, service.tenantId)).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/version 2 is still re-encrypting/) })
  })

  it('refuses to retire a version that still seals anything, naming what and how many', async () => {
    await expect(services().keys.retire(actor, service.tenantId, 1)).rejects.toMatchObject({
      status: 409,
      message: 'Data key version 1 still seals 25 tokens, 1 outbox mail, 1 sealed setting; wait until the re-encryption has moved them (see the key status), then retire it.'
    })
    await expect(services().keys.retire(actor, service.tenantId, 2)).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/is the current one/) })
    await expect(services().keys.retire(actor, service.tenantId, 7)).rejects.toMatchObject({ status: 404 })
  })

  it('re-encrypts in batches of the given size, with progress', async () => {
    expect(await services().keys.reencrypt(10)).toBe(10)
    expect((await tenant()).rotation).toMatchObject({ total: 28, remaining: 17 })
  })

  it('finishes the pass in the background job; every old token reads the same, now from version 2', async () => {
    const results = await services().jobs.runDueJobs()
    expect(results.find((result) => result.name === 'reencrypt-keys')).toEqual({ name: 'reencrypt-keys', processed: 17 })
    expect(await objectsOn(1)).toEqual({ tokens: 0, outbox_mails: 0, sealed_settings: 0, token_intents: 0, idempotent_responses: 0 })
    expect(await objectsOn(2)).toEqual({ tokens: 27, outbox_mails: 1, sealed_settings: 1, token_intents: 0, idempotent_responses: 0 })
    expect((await tenant()).rotation).toMatchObject({ target_version: 2, remaining: 0, finished_at: expect.any(String) })

    for (const [id, data] of before) {
      const read = await service.request('GET', `/tokens/${id}`, { key })
      expect(read.status).toBe(200)
      expect(read.body.data).toEqual(data)
    }
    const [mail] = (await services().mail.listOutbox({ page: 1, size: 100 })).data
    expect(mail.link).toMatch(/\/invitations\/accept\?token=/)
    expect(await services().sealedSettings.get(service.tenantId, SMTP_PASSWORD_SETTING)).toBe('hunter2')
  })

  it('retires version 1 once nothing uses it: deletes the key and returns and keeps a report proving it', async () => {
    const report: KeyRetirementReport = await services().keys.retire(actor, service.tenantId, 1)
    expect(report).toMatchObject({
      report: 'tessera-data-key-retirement',
      tenant_id: service.tenantId,
      retired_version: 1,
      current_version: 2,
      rotation: { target_version: 2, finished_at: expect.any(String) },
      counts_before: { tokens: { 1: 26 }, outbox_mails: { 1: 1 }, sealed_settings: { 1: 1 }, token_intents: {}, idempotent_responses: {} },
      counts_after: { tokens: { 1: 0, 2: 27 }, outbox_mails: { 1: 0, 2: 1 }, sealed_settings: { 1: 0, 2: 1 }, token_intents: { 1: 0 }, idempotent_responses: { 1: 0 } },
      retired_by: `user ${service.ownerUserId} (test)`
    })
    expect(report.retired_key_check_value).not.toBe(report.current_key_check_value)
    expect(await services().keys.report(service.tenantId, 1)).toEqual(report)

    const stored = await sql(service.host.vault.db.reader)('tenant_keys').where({ purpose: 'data' }).select('version')
    expect(stored.map((row) => row.version)).toEqual([2])
    expect((await tenant()).versions[0]).toMatchObject({ version: 1, retired_at: report.retired_at, key_check_value: report.retired_key_check_value })
    for (const [id, data] of before) expect((await service.request('GET', `/tokens/${id}`, { key })).body.data).toEqual(data)
    await expect(services().keys.retire(actor, service.tenantId, 1)).rejects.toMatchObject({ status: 409, message: 'Data key version 1 is already retired.' })
  })

  it('audits each step: rotation started and version retired by the person, the pass finished by the system', async () => {
    const logs = (await service.request('GET', '/logs?entity_type=key')).body.data as Array<Record<string, unknown>>
    expect(logs.map((entry) => [entry.entity_id, entry.operation, entry.actor_id])).toEqual([
      ['data-key-v1', 'retire', service.ownerUserId],
      ['data-key-v2', 'update', undefined],
      ['data-key-v2', 'rotate', service.ownerUserId]
    ])
    expect(logs.map((entry) => entry.message)).toEqual([
      'Data key version 1 retired: no token, token intent, outbox mail or sealed setting used it; the key was deleted (test)',
      'Re-encryption onto data key version 2 finished (26 tokens, 1 outbox mail, 1 sealed setting re-encrypted)',
      'Data key version 2 created; re-encryption of 26 tokens, 1 outbox mail, 1 sealed setting onto it started (test)'
    ])
  })

  it('rotates again onto version 3, never reusing a retired number', async () => {
    expect(await services().keys.rotate(actor, service.tenantId)).toMatchObject({ current_version: 3 })
    service.clock.advance(5_000)
    await services().jobs.runDueJobs()
    expect(await objectsOn(3)).toEqual({ tokens: 27, outbox_mails: 1, sealed_settings: 1, token_intents: 0, idempotent_responses: 0 })
  })
})
