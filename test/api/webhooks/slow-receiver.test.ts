/**
 * Webhook receivers cannot hold up one another: attempts run side by side, one at a time per
 * webhook, so a receiver that never answers holds only its own webhook's deliveries. And the
 * delivery log keeps finished deliveries for 30 days, then the `prune-webhook-deliveries` sweep
 * deletes them; pending ones stay. Runs on both engines.
 */
import { createServer, type ServerResponse, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'

const DAY = 24 * 60 * 60_000

/** A receiver on 127.0.0.1 that reads each POST and answers it with `status`, or, with `hold`, keeps it open until `release()`. */
class Receiver {
  /** The events received, in order, with the path they were posted to. */
  readonly received: Array<{ path: string; eventId: string; tokenId: string }> = []
  readonly open: ServerResponse[] = []
  private server!: Server

  constructor(private readonly answer: { hold?: boolean; status?: number }) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
      req.on('end', () => {
        const { event } = JSON.parse(body)
        this.received.push({ path: req.url ?? '', eventId: event.id, tokenId: event.data.id })
        if (this.answer.hold) this.open.push(res)
        else res.writeHead(this.answer.status ?? 200).end('ok')
      })
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`
  }

  /** Answers the requests held so far, and every later one at once. */
  release(): void {
    this.answer.hold = false
    for (const res of this.open.splice(0)) res.writeHead(200).end('ok')
  }

  async close(): Promise<void> {
    this.release()
    this.server.closeAllConnections()
    await new Promise((resolve) => this.server.close(resolve))
  }
}

describe('webhook receivers that never answer', () => {
  let service: TestService
  let tokenKey: string
  const hanging = new Receiver({ hold: true })
  const healthy = new Receiver({ status: 200 })

  beforeAll(async () => {
    await hanging.start()
    await healthy.start()
    service = await startTestService()
    tokenKey = (await service.createApplication({ name: 'Tokens', type: 'private', permissions: ['token:create'] })).key
  })
  afterAll(async () => {
    hanging.release()
    await service.stop()
    await Promise.all([hanging.close(), healthy.close()])
  })

  const subscribe = async (name: string, url: string) => {
    const created = await service.request('POST', '/webhooks', { body: { name, url, events: ['token.created'] } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    return created.body.id as string
  }
  const statusesOf = async (webhookId: string) => ((await service.request('GET', `/webhooks/${webhookId}/deliveries`)).body.data as Array<{ status: string }>).map((delivery) => delivery.status)

  it('delivers a healthy receiver every event while four receivers that never answer hold one attempt each', async () => {
    const stuck: string[] = []
    for (let n = 0; n < 4; n++) stuck.push(await subscribe(`Stuck ${n}`, hanging.url(`/stuck-${n}`)))
    const live = await subscribe('Live', healthy.url())
    const tokens: string[] = []
    for (let n = 0; n < 3; n++) tokens.push((await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: `value ${n}` } })).body.id)

    await expect.poll(() => healthy.received.map((event) => event.tokenId), { timeout: 5000 }).toEqual(tokens)
    await expect.poll(async () => statusesOf(live)).toEqual(['delivered', 'delivered', 'delivered'])
    // Each stuck webhook holds its own slot: one request open, its three deliveries still pending.
    await expect.poll(() => hanging.open.length).toBe(4)
    expect(hanging.received.map((event) => event.path).sort()).toEqual(['/stuck-0', '/stuck-1', '/stuck-2', '/stuck-3'])
    for (const id of stuck) expect(await statusesOf(id)).toEqual(['pending', 'pending', 'pending'])

    // Once they answer, each gets its events, in order.
    hanging.release()
    await expect.poll(() => hanging.received.length, { timeout: 5000 }).toBe(12)
    for (let n = 0; n < 4; n++) expect(hanging.received.filter((event) => event.path === `/stuck-${n}`).map((event) => event.tokenId)).toEqual(tokens)
  })
})

describe('the webhook delivery log', () => {
  let service: TestService
  let tokenKey: string
  const accepting = new Receiver({ status: 200 })
  const failing = new Receiver({ status: 500 })
  const hanging = new Receiver({ hold: true })

  beforeAll(async () => {
    for (const receiver of [accepting, failing, hanging]) await receiver.start()
    // One attempt: a failure is final at once.
    service = await startTestService({ webhooks: { pollMs: 50, maxAttempts: 1 } })
    tokenKey = (await service.createApplication({ name: 'Tokens', type: 'private', permissions: ['token:create'] })).key
  })
  afterAll(async () => {
    hanging.release()
    await service.stop()
    await Promise.all([accepting.close(), failing.close(), hanging.close()])
  })

  const subscribe = async (name: string, url: string) => (await service.request('POST', '/webhooks', { body: { name, url, events: ['token.created'] } })).body.id as string
  /** A webhook's deliveries, newest first, as [event id, status]. */
  const deliveriesOf = async (webhookId: string) =>
    ((await service.request('GET', `/webhooks/${webhookId}/deliveries`)).body.data as Array<{ status: string; event_id: string }>).map((delivery) => [delivery.event_id, delivery.status])

  /** Creates a token and waits for its event at the accepting receiver; the event's id. */
  async function tokenEvent(): Promise<string> {
    const id = (await service.request('POST', '/tokens', { key: tokenKey, body: { type: 'token', data: 'x' } })).body.id
    await expect.poll(() => accepting.received.find((event) => event.tokenId === id)).toBeDefined()
    return accepting.received.find((event) => event.tokenId === id)!.eventId
  }

  it('deletes delivered, failed and blocked deliveries 30 days after they finished, and keeps pending and newer ones', async () => {
    const webhooks = {
      delivered: await subscribe('Accepting', accepting.url()),
      failed: await subscribe('Failing', failing.url()),
      blocked: await subscribe('Blocked', 'http://10.255.255.1:9/hook'),
      pending: await subscribe('Hanging', hanging.url())
    }
    const old = await tokenEvent()
    for (const [status, id] of Object.entries(webhooks)) await expect.poll(() => deliveriesOf(id)).toEqual([[old, status]])

    service.clock.advance(29 * DAY)
    const recent = await tokenEvent()
    await expect.poll(() => deliveriesOf(webhooks.blocked)).toEqual([[recent, 'blocked'], [old, 'blocked']])
    await expect.poll(() => deliveriesOf(webhooks.failed)).toEqual([[recent, 'failed'], [old, 'failed']])
    await service.host.vault.services.jobs.runDueJobs()
    expect(await deliveriesOf(webhooks.delivered)).toEqual([[recent, 'delivered'], [old, 'delivered']])

    service.clock.advance(2 * DAY)
    await service.host.vault.services.jobs.runDueJobs()
    expect(await deliveriesOf(webhooks.delivered)).toEqual([[recent, 'delivered']])
    expect(await deliveriesOf(webhooks.failed)).toEqual([[recent, 'failed']])
    expect(await deliveriesOf(webhooks.blocked)).toEqual([[recent, 'blocked']])
    // Its receiver has not answered yet: kept, however old.
    expect(await deliveriesOf(webhooks.pending)).toEqual([[recent, 'pending'], [old, 'pending']])
  })
})
