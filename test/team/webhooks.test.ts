/**
 * Webhooks on a team vault with two instances in one PostgreSQL database: a
 * webhook created on one instance gets the events of the other at once (the
 * change feed reloads its subscriptions), a deleted one stops getting them, and
 * each event is delivered once though both instances deliver, one attempt per
 * webhook at a time.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../src/main/crypto/keys'
import { startServiceHost, type ServiceHost } from '../../src/main/bootstrap/service-host'
import { initVault } from '../../src/main/bootstrap/vault'
import { readySodium } from '../../src/main/crypto/sodium'
import { silentLogger } from '../../src/main/infra/logger'
import { createTestDatabase } from '../helpers/postgres'

describe('webhooks on two instances of a team vault', { timeout: 60_000 }, () => {
  let drop: () => Promise<void>
  let dirs: string[]
  let a: ServiceHost
  let b: ServiceHost
  let adminKey: string
  let tokenKey: string
  let receiver: Server
  const received: Array<{ id: string; type: string }> = []

  beforeAll(async () => {
    await readySodium()
    const database = await createTestDatabase()
    drop = database.drop
    const masterKey = generateMasterKey()
    dirs = [await mkdtemp(join(tmpdir(), 'tessera-hooks-a-')), await mkdtemp(join(tmpdir(), 'tessera-hooks-b-'))]
    const init = await initVault({ dataDir: dirs[0], databaseUrl: database.url, masterKey, tenantName: 'Team', ownerEmail: 'owner@example.com' })
    adminKey = init.application.key
    const start = (dataDir: string) =>
      startServiceHost({ dataDir, databaseUrl: database.url, masterKey, host: '127.0.0.1', port: 0, logger: silentLogger(), jobTickMs: 0, webhooks: { pollMs: 50 } })
    a = await start(dirs[0])
    b = await start(dirs[1])
    receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => (body += chunk))
      req.on('end', () => {
        received.push(JSON.parse(body).event)
        res.end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    tokenKey = (await call(a, 'POST', '/applications', adminKey, { name: 'Backend', type: 'private', permissions: ['token:create'] })).body.key
  })
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await new Promise((resolve) => receiver.close(resolve))
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
    await drop()
  })

  async function call(host: ServiceHost, method: string, path: string, key: string, body?: unknown) {
    const response = await fetch(host.url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: response.status, body: response.status === 204 ? undefined : ((await response.json()) as any) }
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 500))

  it('delivers events made on B to a webhook created on A, each once, and none after its deletion on A', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    const webhook = await call(a, 'POST', '/webhooks', adminKey, { name: 'Team', url, events: ['token.created'] })
    expect(webhook.status).toBe(201)
    // B hears of it through the change feed (or, at the latest, its one-second reload).
    const created: string[] = []
    const deadline = Date.now() + 5000
    while (received.length === 0 && Date.now() < deadline) {
      created.push((await call(b, 'POST', '/tokens', tokenKey, { type: 'token', data: 'x' })).body.id)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await settle()
    for (let n = 0; n < 10; n++) created.push((await call(n % 2 ? a : b, 'POST', '/tokens', tokenKey, { type: 'token', data: 'x' })).body.id)
    await settle()
    const receivedIds = received.map((event) => (event as unknown as { data: { id: string } }).data.id)
    // Every token made after B heard of the webhook arrives, each once.
    expect(created.slice(-10).every((id) => receivedIds.includes(id))).toBe(true)
    expect(new Set(received.map((event) => event.id)).size).toBe(received.length)

    expect((await call(a, 'DELETE', `/webhooks/${webhook.body.id}`, adminKey)).status).toBe(204)
    await settle()
    const before = received.length
    for (let n = 0; n < 3; n++) await call(b, 'POST', '/tokens', tokenKey, { type: 'token', data: 'x' })
    await settle()
    expect(received.length).toBe(before)
  })

  it("sends one webhook's deliveries one at a time across both instances, each once", async () => {
    // A slow receiver: each attempt takes 300 ms, long enough for both instances to claim meanwhile.
    let open = 0
    let mostOpen = 0
    const events: string[] = []
    const slow = createServer((req, res) => {
      mostOpen = Math.max(mostOpen, ++open)
      let body = ''
      req.on('data', (chunk) => (body += chunk))
      req.on('end', () =>
        setTimeout(() => {
          open--
          events.push(JSON.parse(body).event.id)
          res.end()
        }, 300)
      )
    })
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`
      const webhook = await call(a, 'POST', '/webhooks', adminKey, { name: 'Slow', url, events: ['token.created'] })
      expect(webhook.status).toBe(201)
      await settle() // B hears of the webhook
      const made = 8
      for (let n = 0; n < made; n++) expect((await call(n % 2 ? a : b, 'POST', '/tokens', tokenKey, { type: 'token', data: 'x' })).status).toBe(201)
      const deadline = Date.now() + 15_000
      while (events.length < made && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
      expect(events).toHaveLength(made)
      expect(new Set(events).size).toBe(made)
      expect(mostOpen).toBe(1)
      await call(a, 'DELETE', `/webhooks/${webhook.body.id}`, adminKey)
    } finally {
      await new Promise((resolve) => slow.close(resolve))
    }
  })
})
