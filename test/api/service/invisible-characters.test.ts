/**
 * Invisible formatting characters (Unicode format characters such as bidi
 * overrides and zero-width spaces, and C1 controls) in the texts the desktop
 * shows people: token ids, metadata and names. Each is a 400 naming the field
 * and stores nothing, so that `cust-1001` plus a zero-width space cannot pass
 * for `cust-1001`, nor `‮2001-tsuc` for `cust-1002`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invitationLink, linkToken } from '../../helpers/invitations'
import { startTestService, type TestService } from '../../helpers/service'

const ZERO_WIDTH_SPACE = '\u200b'
const RIGHT_TO_LEFT_OVERRIDE = '\u202e'
const MESSAGE = /invisible formatting characters/

describe('Invisible formatting characters', () => {
  let service: TestService
  let key: string
  const tokenCount = async () => (await service.request('GET', '/tokens', { key })).body.pagination.total_items

  beforeAll(async () => {
    service = await startTestService()
    key = (await service.createApplication({ name: 'Checkout', type: 'private', permissions: ['token:create', 'token:read', 'token:update'] })).key
  })
  afterAll(() => service.stop())

  it.each([
    ['a token id with a zero-width space', '/tokens', { id: `cust-1001${ZERO_WIDTH_SPACE}`, type: 'token', data: 'x' }, 'id'],
    ['a token id with a right-to-left override', '/tokens', { id: `${RIGHT_TO_LEFT_OVERRIDE}2001-tsuc`, type: 'token', data: 'x' }, 'id'],
    ['a token id with a first strong isolate', '/tokens', { id: 'cust\u20681002', type: 'token', data: 'x' }, 'id'],
    ['a token id with a byte order mark', '/tokens', { id: '\ufeffcust-1003', type: 'token', data: 'x' }, 'id'],
    ['a token id with a C1 control (NEL)', '/tokens', { id: 'cust\u00851004', type: 'token', data: 'x' }, 'id'],
    ['a token id with a line separator', '/tokens', { id: 'cust-1005\u2028verified', type: 'token', data: 'x' }, 'id'],
    ['a metadata value with a right-to-left override', '/tokens', { type: 'token', data: 'x', metadata: { amount: `${RIGHT_TO_LEFT_OVERRIDE}00.0001` } }, 'metadata.amount'],
    ['a metadata value with an Arabic letter mark', '/tokens', { type: 'token', data: 'x', metadata: { amount: '1000\u061c' } }, 'metadata.amount'],
    ['a metadata value in bulk tokenize', '/tokenize', { first: { type: 'token', data: 'x', metadata: { note: `a${ZERO_WIDTH_SPACE}` } } }, 'first.metadata.note']
  ])('refuses %s with a 400 naming it, and stores nothing', async (_, path, body, field) => {
    const before = await tokenCount()
    const response = await service.request('POST', path, { key, body })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(response.body.errors).toEqual({ [field]: [expect.stringMatching(MESSAGE)] })
    expect(await tokenCount()).toBe(before)
  })

  it('refuses a metadata key with a zero-width space', async () => {
    const response = await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'x', metadata: { [`customer${ZERO_WIDTH_SPACE}`]: 'alice' } } })
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ [`metadata.customer${ZERO_WIDTH_SPACE}`]: [expect.stringMatching(MESSAGE)] })
  })

  it('refuses an id that an expression renders with a right-to-left override', async () => {
    const response = await service.request('POST', '/tokens', { key, body: { id: '{{ data | alias_preserve_format }}', type: 'token', data: `${RIGHT_TO_LEFT_OVERRIDE}2001-tsuc` } })
    expect(response.status).toBe(400)
    expect(Object.keys(response.body.errors)).toEqual(['id'])
  })

  it('refuses a merge patch setting a metadata value with an override, and keeps the token as it was', async () => {
    const { id } = (await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'x', metadata: { amount: '1000.00' } } })).body
    const response = await service.request('PATCH', `/tokens/${id}`, { key, body: { metadata: { amount: `${RIGHT_TO_LEFT_OVERRIDE}00.0001` } }, contentType: 'application/merge-patch+json' })
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ 'metadata.amount': [expect.stringMatching(MESSAGE)] })
    expect((await service.request('GET', `/tokens/${id}`, { key })).body.metadata).toEqual({ amount: '1000.00' })
  })

  it('still takes ids, metadata and names in any script, with spaces and punctuation', async () => {
    const created = await service.request('POST', '/tokens', { key, body: { id: 'קוד-1001 café', type: 'token', data: 'x', metadata: { customer: 'كارول, verified' } } })
    expect(created.status).toBe(201)
    expect((await service.request('POST', '/applications', { body: { name: 'Informes ‑ عربي', type: 'private', permissions: ['token:read'] } })).status).toBe(201)
  })

  it.each([
    ['an application name', 'POST', '/applications', { name: `Reporting ${RIGHT_TO_LEFT_OVERRIDE}boj`, type: 'private', permissions: ['token:read'] }],
    ['a webhook name', 'POST', '/webhooks', { name: `Alerts${ZERO_WIDTH_SPACE}`, url: 'https://hooks.example.com/tessera', events: ['token.created'] }],
    ['a tenant name', 'PUT', '/tenants/self', { name: `Acme ${RIGHT_TO_LEFT_OVERRIDE}tluav` }]
  ] as const)('refuses %s with an invisible formatting character: a 400 naming `name`', async (_, method, path, body) => {
    const response = await service.request(method, path, { body })
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ name: [expect.stringMatching(MESSAGE)] })
  })

  it.each([
    ['an application name with a line break', 'POST', '/applications', { name: 'Reporting\n  Link: https://evil.example/', type: 'private', permissions: ['token:read'] }],
    ['a webhook name with a tab', 'POST', '/webhooks', { name: 'Alerts\tnow', url: 'https://hooks.example.com/tessera', events: ['token.created'] }],
    ['a tenant name with a terminal escape', 'PUT', '/tenants/self', { name: 'Acme \u001b[31mWAITING\u001b[0m' }]
  ] as const)('refuses %s: a 400 naming `name`, as a name is read on one line', async (_, method, path, body) => {
    const response = await service.request(method, path, { body })
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ name: [expect.stringMatching(/control characters/)] })
  })

  it('refuses an invitee name with an override, and the invitation stays open', async () => {
    const invitation = (await service.request('POST', '/tenants/self/invitations', { body: { email: 'rtl@example.com' } })).body
    const token = linkToken(await invitationLink(service, invitation.id))
    const refused = await service.request('POST', '/invitations/accept', { key: null, body: { token, first_name: `Ada${RIGHT_TO_LEFT_OVERRIDE}`, last_name: 'L' } })
    expect(refused.status).toBe(400)
    expect(refused.body.errors).toEqual({ first_name: [expect.stringMatching(MESSAGE)] })
    expect((await service.request('POST', '/invitations/accept', { key: null, body: { token, first_name: 'Ada', last_name: 'L' } })).status).toBe(201)
  })
})
