/**
 * Tessera as a drop-in Basis Theory, end to end: the vault is made by `tessera init`
 * and served by `tessera serve` (child processes, SQLite in a temporary data dir),
 * and Basis Theory's official SDK, given only the served URL and a key, is the only
 * client of its API. One integration's story, walking each capability once: the
 * tenant, an application and its key rotation, a signed webhook delivery, tokens
 * (create, get, update, list and search by cursor, detokenize, delete), token
 * intents, idempotent retries and trace ids in the audit log.
 */
import { constants, verify } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BasisTheory, BasisTheoryClient } from '@basis-theory/node-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, serve, terminate, type Served } from '../helpers/cli'
import { cardNumber } from '../helpers/tokens'

/** Spawning Node with tsx, and the vault's first writes, take seconds on two busy cores. */
const CLI_TIMEOUT_MS = 90_000
const TOKENS = ['token:create', 'token:read', 'token:update', 'token:delete', 'token:search']

interface Delivery {
  headers: IncomingHttpHeaders
  /** The body exactly as received: the signature covers these bytes. */
  body: Buffer
}

/** A webhook endpoint of the integration, on 127.0.0.1 (where the vault delivers by default). */
class Receiver {
  readonly deliveries: Delivery[] = []
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      this.deliveries.push({ headers: req.headers, body: Buffer.concat(chunks) })
      res.end()
    })
  })

  start(): Promise<void> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve))
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/tessera-events`
  }

  /** The deliveries announcing `type` for the entity `id`. */
  about(type: string, id: string): Delivery[] {
    return this.deliveries.filter((delivery) => {
      const { event } = JSON.parse(delivery.body.toString('utf8'))
      return event.type === type && event.data.id === id
    })
  }

  async waitFor(type: string, id: string, timeoutMs = 20_000): Promise<Delivery> {
    const deadline = Date.now() + timeoutMs
    while (this.about(type, id).length === 0) {
      if (Date.now() > deadline) throw new Error(`no ${type} delivery for ${id} within ${timeoutMs} ms`)
      await sleep(50)
    }
    return this.about(type, id)[0]
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Every token of a pager, each page loaded by the SDK from the previous page's cursor. */
async function all(pager: Promise<AsyncIterable<BasisTheory.Token>>): Promise<BasisTheory.Token[]> {
  const tokens: BasisTheory.Token[] = []
  for await (const token of await pager) tokens.push(token)
  return tokens
}

const ids = (tokens: BasisTheory.Token[]) => tokens.map((token) => token.id).sort()

/** The HTTP status an SDK call failed with. */
const statusOf = (call: Promise<unknown>) =>
  call.then(
    () => 'succeeded',
    (error: { statusCode?: number }) => error.statusCode
  )

describe('the Basis Theory SDK against `tessera serve`', { timeout: CLI_TIMEOUT_MS }, () => {
  let root: string
  let tenantId: string
  let server: Served | undefined
  const receiver = new Receiver()
  /** The vault's management application, whose key `tessera init` printed. */
  let admin: BasisTheoryClient
  /** The integration's backend: a private application that reveals and manages its tokens. */
  let backend: BasisTheoryClient
  let backendKey: string
  /** The integration's checkout page: a public application, which may only put data in. */
  let checkout: BasisTheoryClient
  const customer = 'cust-1017'

  const clientWith = (apiKey: string, options: { correlationId?: string } = {}) => new BasisTheoryClient({ apiKey, environment: server!.url, ...options })

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-sdk-'))
    const dataDir = join(root, 'vault')
    const init = await run(['init', '--data-dir', dataDir, '--json', '--tenant-name', 'Shop'])
    expect(init.code, init.stderr).toBe(0)
    const initialised = JSON.parse(init.stdout)
    tenantId = initialised.tenant_id
    await receiver.start()
    // A failed delivery is retried within a second rather than after 30.
    server = await serve(dataDir, { TESSERA_WEBHOOK_RETRY_BASE_MS: '200' })
    admin = clientWith(initialised.application.key)
  }, CLI_TIMEOUT_MS)

  afterAll(async () => {
    if (server) expect((await terminate(server)).code).toBe(0)
    await receiver.close()
    await rm(root, { recursive: true, force: true })
  }, CLI_TIMEOUT_MS)

  it('pings the service, reads the tenant init made, and renames it', async () => {
    await expect(admin.webhooks.ping()).resolves.toBeUndefined()
    const tenant = await admin.tenants.self.get()
    expect(tenant).toMatchObject({ id: tenantId, name: 'Shop', settings: {} })
    expect(tenant.createdAt).toBeInstanceOf(Date)
    expect(await admin.tenants.self.update({ name: 'Shop (staging)' })).toMatchObject({ id: tenantId, name: 'Shop (staging)' })
    expect((await admin.tenants.self.get()).name).toBe('Shop (staging)')
  })

  it('creates the applications with their keys, and rotates the backend key: the deleted key is refused at once', async () => {
    const application = await admin.applications.create({
      name: 'Shop backend',
      type: 'private',
      rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: TOKENS }],
      createKey: true
    })
    expect(application.key).toMatch(/^key_private_/)
    const first = clientWith(application.key!)
    await expect(first.tokens.listV2({ size: 1 })).resolves.toBeDefined()

    const added = await admin.applicationKeys.create(application.id!)
    expect(added.key).toMatch(/^key_private_/)
    const listed = await admin.applicationKeys.list(application.id!)
    expect(listed.map((key) => key.id).sort()).toEqual([application.keys![0].id, added.id].sort())
    for (const key of listed) expect(key.key).toBeUndefined()
    expect(await admin.applicationKeys.get(application.id!, added.id!)).toMatchObject({ id: added.id, createdAt: added.createdAt })

    await admin.applicationKeys.delete(application.id!, application.keys![0].id!)
    expect(await statusOf(first.tokens.listV2({ size: 1 }))).toBe(401)
    await expect(admin.applicationKeys.get(application.id!, application.keys![0].id!)).rejects.toMatchObject({ statusCode: 404 })
    backendKey = added.key!
    backend = clientWith(backendKey)
    await expect(backend.tokens.listV2({ size: 1 })).resolves.toBeDefined()

    const page = await admin.applications.create({ name: 'Checkout page', type: 'public', permissions: ['token:create'], createKey: true })
    checkout = clientWith(page.key!)
  })

  it('delivers token.created once to a loopback webhook, signed with the key the vault publishes', async () => {
    const webhook = await admin.webhooks.create({ name: 'Shop events', url: receiver.url, events: ['token.created'] })
    expect(webhook).toMatchObject({ tenantId, status: 'enabled', url: receiver.url, events: ['token.created'] })
    // The signing key is Tessera's own (docs/basis-theory.md, Webhooks): the SDK has no call for it,
    // so it is fetched as the docs say, without a key.
    const publicKey = await (await fetch(`${server!.url}/webhooks/signing-key`)).text()
    expect(publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----/)

    const token = await backend.tokens.create({ type: 'token', data: 'Welcome gift code', metadata: { campaign: 'welcome' } }, { correlationId: 'signup-trace-1' })
    const { headers, body } = await receiver.waitFor('token.created', token.id!)
    expect(headers['bt-signature-version']).toBe('tessera-rsa-pss-sha256-v1')
    const signature = Buffer.from(headers['bt-signature'] as string, 'base64')
    const signedBy = (bytes: Buffer) => verify('sha256', bytes, { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, signature)
    expect(signedBy(body)).toBe(true)
    expect(signedBy(Buffer.concat([body, Buffer.from(' ')]))).toBe(false)
    const { event } = JSON.parse(body.toString('utf8'))
    expect(event).toMatchObject({ type: 'token.created', tenant_id: tenantId, trace_id: 'signup-trace-1', data: { id: token.id, metadata: { campaign: 'welcome' } } })
    expect(body.toString('utf8')).not.toContain('Welcome gift code')

    // Another poll of the outbox, and the event has still been delivered once.
    await sleep(1500)
    expect(receiver.about('token.created', token.id!)).toHaveLength(1)
    await admin.webhooks.delete(webhook.id)
  })

  it('creates, reads, updates, lists, searches, detokenizes and deletes tokens', async () => {
    const number = cardNumber(16)
    // An expired card (kept for the account updater) with its CVC as a number.
    const card = await backend.tokens.create({
      type: 'card',
      data: { number, expiration_month: 3, expiration_year: 2021, cvc: 737 },
      metadata: { customer, last4: number.slice(-4) }
    })
    expect(card).toMatchObject({ type: 'card', containers: ['/pci/high/'], metadata: { customer, last4: number.slice(-4) } })
    // Metadata may describe the data in words the data shares.
    const note = await backend.tokens.create({ type: 'token', data: 'Sensitive Value', metadata: { customer, nonSensitiveField: 'Non-Sensitive Value' } })
    const email = await backend.tokens.create({ type: 'token', data: { email: 'ada@example.com' }, metadata: { customer }, searchIndexes: ['{{ data.email }}'] })

    expect((await backend.tokens.get(card.id!)).data).toEqual({ number, expiration_month: 3, expiration_year: 2021, cvc: '737' })
    const updated = await backend.tokens.update(note.id!, { metadata: { tier: 'gold' } })
    expect(updated.metadata).toEqual({ customer, nonSensitiveField: 'Non-Sensitive Value', tier: 'gold' })
    expect((await backend.tokens.get(note.id!)).data).toBe('Sensitive Value')

    // Cursor paging by hand, two at a time: the last page has no `next`, and it is not empty.
    const page = await backend.tokens.listV2({ metadata: { customer }, size: 2 })
    const firstPage = page.data.map((token) => token.id)
    expect(firstPage).toHaveLength(2)
    expect(page.hasNextPage()).toBe(true)
    await page.getNextPage()
    expect(page.data).toHaveLength(1)
    expect(page.hasNextPage()).toBe(false)
    expect([...firstPage, page.data[0].id].sort()).toEqual([card.id, note.id, email.id].sort())
    // The SDK's own pager, one token a page, reaches the same end.
    expect(ids(await all(backend.tokens.listV2({ metadata: { customer }, size: 1 })))).toEqual([card.id, note.id, email.id].sort())

    expect(ids(await all(backend.tokens.searchV2({ query: `metadata.customer:${customer}`, size: 2 })))).toEqual([card.id, note.id, email.id].sort())
    expect(ids(await all(backend.tokens.searchV2({ query: 'data:"ada@example.com"' })))).toEqual([email.id])

    const detokenized = await backend.tokens.detokenize({ card: `Card ending {{ ${card.id} | json: '$.number' | last4 }}`, note: `{{ ${note.id} }}` })
    expect(detokenized).toEqual({ card: `Card ending ${number.slice(-4)}`, note: 'Sensitive Value' })

    await backend.tokens.delete(note.id!)
    await expect(backend.tokens.get(note.id!)).rejects.toBeInstanceOf(BasisTheory.NotFoundError)
    expect(ids(await all(backend.tokens.listV2({ metadata: { customer }, size: 2 })))).toEqual([card.id, email.id].sort())
  })

  it('takes card data as a token intent from the checkout page, and converts it into a token once', async () => {
    const number = cardNumber(16)
    const data = { number, expiration_month: 11, expiration_year: 2029, cvc: '123' }
    const intent = await checkout.tokenIntents.create({ type: 'card', data })
    expect(intent).toMatchObject({ type: 'card', tenantId, card: { bin: number.slice(0, 6), last4: number.slice(-4), expirationMonth: 11, expirationYear: 2029 } })
    expect(JSON.stringify(intent)).not.toContain(number)
    expect(await backend.tokenIntents.get(intent.id!)).toMatchObject({ id: intent.id, fingerprint: intent.fingerprint })

    const token = await backend.tokens.create({ tokenIntentId: intent.id, metadata: { customer } })
    expect(token).toMatchObject({ type: 'card', fingerprint: intent.fingerprint, metadata: { customer } })
    expect((await backend.tokens.get(token.id!)).data).toEqual(data)
    await expect(backend.tokenIntents.get(intent.id!)).rejects.toMatchObject({ statusCode: 404 })
    await expect(backend.tokens.create({ tokenIntentId: intent.id })).rejects.toMatchObject({ statusCode: 400 })

    const abandoned = await checkout.tokenIntents.create({ type: 'card', data: { number: cardNumber(16) } })
    await backend.tokenIntents.delete(abandoned.id!)
    await expect(backend.tokenIntents.get(abandoned.id!)).rejects.toMatchObject({ statusCode: 404 })
  })

  it('replays the first token when a create is retried under the same idempotency key', async () => {
    const request = { type: 'token', data: 'Gift card 1017', metadata: { order: 'order-1017' } }
    const first = await backend.tokens.create(request, { idempotencyKey: 'order-1017' })
    const retry = await backend.tokens.create(request, { idempotencyKey: 'order-1017' })
    expect(retry.id).toBe(first.id)
    expect(ids(await all(backend.tokens.listV2({ metadata: { order: 'order-1017' } })))).toEqual([first.id])
  })

  it('records the correlation id of each request in the audit log', async () => {
    const traced = clientWith(backendKey, { correlationId: 'checkout-trace-7' })
    const token = await traced.tokens.create({ type: 'token', data: 'traced' })
    await traced.tokens.get(token.id!, { correlationId: 'refund-trace-9' })
    const logs = await admin.logs.list({ entityId: token.id })
    // The SDK's Log type has no trace id; the SDK passes Tessera's `trace_id` through as it came.
    const traces = logs.data.map((entry) => [entry.operation, (entry as { trace_id?: string }).trace_id])
    expect(traces).toEqual([
      ['read', 'refund-trace-9'],
      ['create', 'checkout-trace-7']
    ])
  })
})
