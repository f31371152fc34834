/**
 * Webhook delivery over HTTP against a receiver on 127.0.0.1: events for each
 * entity kind arrive signed (verified with the published public key over the
 * exact body), never with token data; failures are retried with backoff and
 * logged; hosts that are neither loopback nor allowed are never connected to
 * and logged as blocked. Runs on both engines.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { constants, verify } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'
import { addMember } from '../../helpers/invitations'
import { cardNumber } from '../../helpers/tokens'

interface Received {
  headers: IncomingHttpHeaders
  body: string
}

/** A webhook receiver on 127.0.0.1 answering each POST with the next status of `statuses` (then 200). */
class Receiver {
  readonly received: Received[] = []
  statuses: number[] = []
  private server!: Server

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
        res.statusCode = this.statuses.shift() ?? 200
        res.end('ok')
      })
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
  }

  events(): Array<{ type: string; data: Record<string, unknown> } & Record<string, unknown>> {
    return this.received.map((entry) => JSON.parse(entry.body).event)
  }

  async waitFor(count: number, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.received.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} deliveries, got ${this.received.length}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

const sortedKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sortedKeys)
    : value && typeof value === 'object'
      ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]))
      : value

/** Every string in a JSON value, however deep. */
const stringsIn = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value).flatMap(stringsIn) : []

describe('webhook delivery', () => {
  let service: TestService
  let receiver: Receiver
  let publicKey: string
  /** A private application's key: the vault's own key manages, it does not tokenize. */
  let tokenKey: string

  beforeAll(async () => {
    receiver = new Receiver()
    await receiver.start()
    service = await startTestService({ webhooks: { retryBaseMs: 1000, maxAttempts: 3, pollMs: 50, allowedHosts: ['192.0.2.0/24'] } })
    publicKey = (await service.request('GET', '/webhooks/signing-key', { key: null })).body
    tokenKey = (await service.createApplication({ name: 'Tokens', type: 'private', permissions: ['token:create', 'token:read', 'token:update', 'token:delete'] })).key
  })
  afterAll(async () => {
    await service.stop()
    await receiver.close()
  })
  beforeEach(async () => {
    for (const webhook of (await service.request('GET', '/webhooks')).body.data) await service.request('DELETE', `/webhooks/${webhook.id}`)
    receiver.received.length = 0
    receiver.statuses = []
  })

  const subscribe = async (events: string[], url = receiver.url) => {
    const created = await service.request('POST', '/webhooks', { body: { name: 'Receiver', url, events } })
    expect(created.status).toBe(201)
    return created.body.id as string
  }
  const deliveries = async (webhookId: string) => (await service.request('GET', `/webhooks/${webhookId}/deliveries`)).body.data

  it('POSTs token events signed with RSA-PSS over the exact canonical body', async () => {
    await subscribe(['token.created'])
    const number = cardNumber()
    const token = await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'card', data: { number, expiration_month: 1, expiration_year: 2030, cvc: '123' }, metadata: { order: '42' } }, headers: { 'BT-TRACE-ID': 'trace-123' } })
    expect(token.status).toBe(201)
    await receiver.waitFor(1)
    const [{ headers, body }] = receiver.received
    expect(headers['content-type']).toBe('application/json')
    expect(headers['bt-signature-version']).toBe('tessera-rsa-pss-sha256-v1')
    const signature = Buffer.from(headers['bt-signature'] as string, 'base64')
    expect(verify('sha256', Buffer.from(body), { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, signature)).toBe(true)
    expect(verify('sha256', Buffer.from(body + ' '), { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, signature)).toBe(false)
    // The body is the canonical form of what it holds: a receiver can recompute the signed bytes.
    expect(JSON.stringify(sortedKeys(JSON.parse(body)))).toBe(body)
    const sent = JSON.parse(body)
    expect(sent).toEqual({
      delivered_at: expect.any(String),
      event: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        type: 'token.created',
        timestamp: new Date(service.clock.now()).toISOString(),
        tenant_id: service.tenantId,
        trace_id: 'trace-123',
        data: expect.objectContaining({ id: token.body.id, type: 'card', containers: ['/pci/high/'], metadata: { order: '42' }, fingerprint: token.body.fingerprint, actor: { id: expect.any(String), type: 'application' } })
      }
    })
    expect(body).not.toContain(number)
    // Not even masked: no value but the random ids and the fingerprint (whose digits may hold any four) holds the last four.
    const random = new Set([sent.event.id, token.body.id, token.body.fingerprint, sent.event.data.actor.id, service.tenantId])
    expect(stringsIn(sent).filter((text) => !random.has(text) && text.includes(number.slice(-4)))).toEqual([])
    expect(body).not.toContain('"data":{"cvc')
  })

  it('emits nothing for events no webhook subscribes to', async () => {
    await subscribe(['token.deleted'])
    await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: 'not sent' } })
    const id = await subscribe(['application.created'])
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.received).toHaveLength(0)
    expect(await deliveries(id)).toEqual([])
  })

  it('sends events for tokens, applications and keys, sessions, members and invitations, never with token data or keys', async () => {
    const all = (await service.request('GET', '/webhooks/event-types')).body as string[]
    await subscribe(all.slice(0, 5))
    await subscribe(all.slice(5, 10))
    await subscribe(all.slice(10))
    const secret = 'super secret generic value'
    const token = (await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: secret } })).body
    await service.request('PATCH', `/tokens/${token.id}`, { key: tokenKey, body: { metadata: { a: 'b' } }, contentType: 'application/merge-patch+json' })
    await service.request('DELETE', `/tokens/${token.id}`, { key: tokenKey })
    const app = await service.request('POST', '/applications', { body: { name: 'Shop', type: 'public', permissions: ['token:create'] } })
    const privateApp = await service.createApplication({ name: 'Backend', type: 'private', permissions: ['token:create'] })
    await service.request('PUT', `/applications/${app.body.id}`, { body: { name: 'Shop 2', permissions: ['token:create'] } })
    const key = await service.request('POST', `/applications/${app.body.id}/keys`)
    await service.request('DELETE', `/applications/${app.body.id}/keys/${key.body.id}`)
    const regenerated = await service.request('POST', `/applications/${app.body.id}/regenerate`)
    const session = await service.request('POST', '/sessions', { key: regenerated.body.key })
    await service.request('POST', '/sessions/authorize', { key: privateApp.key, body: { nonce: session.body.nonce, permissions: ['token:create'] } })
    const invitation = await service.request('POST', '/tenants/self/invitations', { body: { email: 'new@example.com' } })
    await service.request('POST', `/tenants/self/invitations/${invitation.body.id}/resend`)
    await service.request('DELETE', `/tenants/self/invitations/${invitation.body.id}`)
    const member = await addMember(service, 'ada@example.com')
    expect((await service.request('DELETE', `/tenants/self/members/${member.id}`)).status).toBe(204)
    expect((await service.request('DELETE', `/applications/${app.body.id}`)).status).toBe(204)
    const expected = [
      'token.created', 'token.updated', 'token.deleted',
      'application.created', 'application.updated', 'application.key.created', 'application.key.deleted', 'application.key.regenerated', 'application.deleted',
      'session.created', 'session.authorized',
      'tenant.invitation.created', 'tenant.invitation.resent', 'tenant.invitation.deleted', 'tenant.invitation.accepted', 'tenant.member.deleted'
    ]
    await expect.poll(() => expected.filter((type) => !receiver.events().some((event) => event.type === type)), { timeout: 5000 }).toEqual([])
    const everything = receiver.received.map((entry) => entry.body).join('\n')
    expect(everything).not.toContain(secret)
    expect(everything).not.toContain(privateApp.key)
    expect(everything).not.toContain(key.body.key)
    expect(everything).not.toContain(session.body.session_key)
    expect(everything).not.toContain(session.body.nonce)
    expect(everything).not.toContain(regenerated.body.key)
    expect(receiver.events().find((event) => event.type === 'application.created')!.data).toMatchObject({ id: app.body.id, name: 'Shop', type: 'public', actor: { type: 'application' } })
  })

  it('sends token.deleted and application.deleted with no actor when a token or an application expires', async () => {
    await subscribe(['token.deleted', 'application.deleted'])
    const expiresAt = new Date(service.clock.now() + 60_000).toISOString()
    const token = await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: 'short-lived', expires_at: expiresAt } })
    const app = await service.createApplication({ name: 'Temporary', type: 'private', permissions: ['token:read'], expires_at: expiresAt })
    service.clock.advance(120_000)
    await service.host.vault.services.jobs.runDueJobs()
    await receiver.waitFor(2)
    const events = receiver.events()
    expect(events.find((event) => event.type === 'token.deleted')!.data).toMatchObject({ id: token.body.id, actor: null })
    expect(events.find((event) => event.type === 'application.deleted')!.data).toEqual({ id: app.id, tenant_id: service.tenantId, actor: null })
    expect(events.every((event) => event.trace_id === null)).toBe(true)
  })

  /**
   * Waits until the worker has logged `count` attempts: the next attempt's time is set from
   * the clock when an attempt is logged, so the clock may move on only after that.
   */
  const attemptsLogged = (id: string, count: number) => expect.poll(async () => (await deliveries(id))[0]?.attempts.length).toBe(count)

  it('retries a failing receiver with backoff and logs each attempt', async () => {
    const id = await subscribe(['token.created'])
    receiver.statuses = [500, 503]
    await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: 'x' } })
    await receiver.waitFor(1)
    await attemptsLogged(id, 1)
    const [first] = await deliveries(id)
    expect(first).toMatchObject({ status: 'pending', event_type: 'token.created', next_attempt_at: new Date(service.clock.now() + 1000).toISOString() })
    expect(first.attempts[0]).toMatchObject({ outcome: 'failed', status_code: 500, error: 'HTTP_500' })
    // Not due yet: nothing is sent until the backoff has passed.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.received).toHaveLength(1)
    service.clock.advance(1000)
    await receiver.waitFor(2)
    await attemptsLogged(id, 2)
    service.clock.advance(2000)
    await receiver.waitFor(3)
    await expect.poll(async () => (await deliveries(id))[0]?.status).toBe('delivered')
    const [done] = await deliveries(id)
    expect(done.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([500, 503, 200])
    expect(done.completed_at).toBeDefined()
    // The same event each time.
    expect(new Set(receiver.events().map((event) => event.id)).size).toBe(1)
  })

  it('gives up after the last attempt and logs the delivery as failed', async () => {
    const id = await subscribe(['token.created'])
    receiver.statuses = [500, 500, 500, 500]
    await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: 'x' } })
    await receiver.waitFor(1)
    await attemptsLogged(id, 1)
    service.clock.advance(1000)
    await receiver.waitFor(2)
    await attemptsLogged(id, 2)
    service.clock.advance(2000)
    await receiver.waitFor(3)
    await expect.poll(async () => (await deliveries(id))[0]?.status).toBe('failed')
    service.clock.advance(60_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.received).toHaveLength(3)
  })

  it('never connects to a host that is neither loopback nor allowed, and logs the delivery as blocked', async () => {
    // 10.255.255.1 is not on the allow-list (192.0.2.0/24 is): nothing may reach it.
    const id = await subscribe(['token.created'], 'http://10.255.255.1:9/hook')
    await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: 'x' } })
    await expect.poll(async () => (await deliveries(id))[0]?.status).toBe('blocked')
    const [blocked] = await deliveries(id)
    expect(blocked.attempts).toEqual([{ at: expect.any(String), outcome: 'blocked', duration_ms: expect.any(Number), error: 'HOST_NOT_ALLOWED' }])
    expect(blocked.attempts[0].duration_ms).toBeLessThan(500)
    const filtered = await service.request('GET', `/webhooks/${id}/deliveries?status=blocked`)
    expect(filtered.body.pagination.total_items).toBe(1)
  })

  it('judges a name by the address it resolves to: localhost is loopback, a name of a private address is not', async () => {
    const local = await subscribe(['token.created'], receiver.url.replace('127.0.0.1', 'localhost'))
    await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: 'x' } })
    await receiver.waitFor(1)
    await expect.poll(async () => (await deliveries(local))[0]?.status).toBe('delivered')
  })
})
