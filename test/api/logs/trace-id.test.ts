/**
 * Every audit entry a REST request writes carries the request's BT-TRACE-ID:
 * the one it sent, or the one generated and returned in the response.
 * Refused requests record their first request's; desktop, CLI and system
 * entries carry none. Runs on both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEntry } from '../../../src/shared/types'
import { invitationLink, linkToken } from '../../helpers/invitations'
import { cardNumber } from '../../helpers/tokens'
import { startTestService, type TestService } from '../../helpers/service'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']

describe('BT-TRACE-ID in the audit log', () => {
  let service: TestService
  let key: string
  let traceCount = 0

  beforeAll(async () => {
    service = await startTestService()
    key = (await service.createApplication({ name: 'Checkout', type: 'private', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: CRUD }] })).key
  })
  afterAll(() => service.stop())

  const traced = (trace: string, extra: Record<string, string> = {}) => ({ headers: { 'bt-trace-id': trace, ...extra } })
  const entriesOf = async (entityId: string): Promise<LogEntry[]> => (await service.request('GET', `/logs?entity_id=${entityId}&size=100`)).body.data

  it('records the trace id a request sent on its create entry, and the next request’s on its read entry', async () => {
    const created = await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'traced' }, ...traced('checkout-7f3a 2026/11/26') })
    expect(created.status).toBe(201)
    expect((await service.request('GET', `/tokens/${created.body.id}`, { key, ...traced('read-1') })).status).toBe(200)
    const entries = await entriesOf(created.body.id)
    expect(entries.map((entry) => [entry.operation, entry.trace_id])).toEqual([
      ['read', 'read-1'],
      ['create', 'checkout-7f3a 2026/11/26']
    ])
  })

  it('records the generated trace id a request without one gets back in the response', async () => {
    const created = await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'untraced' } })
    const generated = created.headers.get('bt-trace-id')
    expect(generated).toMatch(UUID)
    expect((await entriesOf(created.body.id)).map((entry) => entry.trace_id)).toEqual([generated])
  })

  it('records the generated trace id that replaced one too long to keep', async () => {
    const created = await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'too long' }, ...traced('x'.repeat(129)) })
    const generated = created.headers.get('bt-trace-id')
    expect(generated).toMatch(UUID)
    expect((await entriesOf(created.body.id)).map((entry) => entry.trace_id)).toEqual([generated])
  })

  it('records the reader’s trace id on its read of the log itself', async () => {
    await service.request('GET', '/logs?size=1', traced('log-reader-1'))
    const [read] = (await service.request('GET', '/logs?entity_type=log&size=1')).body.data as LogEntry[]
    expect(read).toMatchObject({ entity_type: 'log', operation: 'read', trace_id: 'log-reader-1' })
  })

  it('records the first refused request’s trace id on the aggregated entry, for 401 and 403 alike', async () => {
    for (const trace of ['refused-1', 'refused-2']) expect((await service.request('GET', '/tokens/anything', { key: 'key_private_wrong', ...traced(trace) })).status).toBe(401)
    const noLogs = await service.createApplication({ name: 'No logs', type: 'private', permissions: ['token:read'] })
    for (const trace of ['forbidden-1', 'forbidden-2']) expect((await service.request('GET', '/logs', { key: noLogs.key, ...traced(trace) })).status).toBe(403)
    await service.host.vault.services.denials.flush()
    const refusals: LogEntry[] = (await service.request('GET', '/logs?entity_type=request&size=10')).body.data
    expect(refusals.map((entry) => [entry.operation, entry.count, entry.trace_id]).sort()).toEqual([
      ['forbidden', 2, 'forbidden-1'],
      ['unauthenticated', 2, 'refused-1']
    ])
  })

  it('records the replaying request’s trace id on an idempotent replay', async () => {
    const body = { type: 'token', data: 'once' }
    const first = await service.request('POST', '/tokens', { key, body, ...traced('first-try', { 'BT-IDEMPOTENCY-KEY': 'trace-retry' }) })
    expect((await service.request('POST', '/tokens', { key, body, ...traced('retry', { 'BT-IDEMPOTENCY-KEY': 'trace-retry' }) })).body.id).toBe(first.body.id)
    const [replay] = (await service.request('GET', '/logs?entity_type=idempotency-key&size=1')).body.data as LogEntry[]
    expect(replay).toMatchObject({ operation: 'read', trace_id: 'retry' })
    expect((await entriesOf(first.body.id)).map((entry) => entry.trace_id)).toEqual(['first-try'])
  })

  let publicAppKey: string | undefined
  const tokenId = async () => (await service.request('POST', '/tokens', { key, body: { type: 'token', data: 'to act on' } })).body.id as string
  const adminId = async () => (await service.request('GET', '/applications/key')).body.id as string
  async function publicKey(): Promise<string> {
    publicAppKey ??= (await service.createApplication({ name: 'Browser', type: 'public', permissions: ['token:create'] })).key
    return publicAppKey
  }
  const none = async () => ''

  /**
   * Each call with its own trace id, between two reads of the log: the entries
   * after the first read are the call's, and every one carries its id.
   */
  it.each([
    ['PATCH /tokens/:id', tokenId, (trace: string, id: string) => service.request('PATCH', `/tokens/${id}`, { key, body: { metadata: { a: 'b' } }, contentType: 'application/merge-patch+json', ...traced(trace) })],
    ['POST /detokenize', tokenId, (trace: string, id: string) => service.request('POST', '/detokenize', { key, body: { value: `{{ ${id} }}` }, ...traced(trace) })],
    ['POST /tokenize', none, (trace: string) => service.request('POST', '/tokenize', { key, body: { a: { type: 'token', data: 'x' }, b: { type: 'token', data: 'y' } }, ...traced(trace) })],
    ['DELETE /tokens/:id', tokenId, (trace: string, id: string) => service.request('DELETE', `/tokens/${id}`, { key, ...traced(trace) })],
    ['POST /token-intents', none, (trace: string) => service.request('POST', '/token-intents', { key, body: { type: 'card', data: { number: cardNumber(), expiration_month: 2, expiration_year: 2031 } }, ...traced(trace) })],
    ['POST /applications', none, (trace: string) => service.request('POST', '/applications', { body: { name: 'Traced', type: 'private', permissions: ['token:read'] }, ...traced(trace) })],
    ['POST /applications/:id/keys', adminId, (trace: string, id: string) => service.request('POST', `/applications/${id}/keys`, traced(trace))],
    ['PUT /tenants/self', none, (trace: string) => service.request('PUT', '/tenants/self', { body: { name: 'Traced tenant' }, ...traced(trace) })],
    ['POST /tenants/self/invitations', none, (trace: string) => service.request('POST', '/tenants/self/invitations', { body: { email: `traced-${++traceCount}@example.com` }, ...traced(trace) })],
    ['POST /sessions', publicKey, (trace: string, publicAppKey: string) => service.request('POST', '/sessions', { key: publicAppKey, ...traced(trace) })]
  ])('records the trace id on every entry of %s', async (route, prepare, call) => {
    const argument = await prepare()
    const before = `before ${route}`
    await service.request('GET', '/logs?size=1', traced(before))
    const trace = `call ${route}`
    const response = await call(trace, argument)
    expect(response.status).toBeLessThan(300)
    const newest: LogEntry[] = (await service.request('GET', '/logs?size=50')).body.data
    const written = newest.slice(0, newest.findIndex((entry) => entry.trace_id === before))
    expect(written.length).toBeGreaterThan(0)
    expect(written.map((entry) => entry.trace_id)).toEqual(written.map(() => trace))
  })

  it('records the trace id of an invitation accepted without an API key, on the acceptance and the new member', async () => {
    const invitation = (await service.request('POST', '/tenants/self/invitations', { body: { email: 'accepting@example.com' } })).body
    const token = linkToken(await invitationLink(service, invitation.id))
    const accepted = await service.request('POST', '/invitations/accept', { key: null, body: { token, first_name: 'Ada', last_name: 'L' }, ...traced('accept-link-1') })
    expect(accepted.status).toBe(201)
    expect((await entriesOf(invitation.id)).map((entry) => [entry.operation, entry.trace_id])).toEqual([
      ['accept', 'accept-link-1'],
      ['create', expect.stringMatching(UUID)]
    ])
    expect((await entriesOf(accepted.body.id)).map((entry) => [entry.operation, entry.trace_id])).toEqual([['create', 'accept-link-1']])
  })

  it('records none on the entries the CLI wrote (init)', async () => {
    const [tenant] = (await service.request('GET', '/logs?entity_type=tenant&size=100')).body.data.slice(-1) as LogEntry[]
    expect(tenant).toMatchObject({ operation: 'create', actor_type: 'user' })
    expect(tenant).not.toHaveProperty('trace_id')
  })
})
