/**
 * Webhook deliveries survive a restart of `tessera serve`: an event whose
 * delivery failed waits in the vault's outbox while the service is down and is
 * delivered, the same event, once it runs again. (The CLI's vault is a SQLite
 * file, so the PostgreSQL project skips this.)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, serve, terminate, type Served } from '../../helpers/cli'
import { onPostgres } from '../../helpers/postgres'

describe.skipIf(onPostgres)('webhook delivery across a restart of tessera serve', { timeout: 90_000 }, () => {
  let root: string
  let dataDir: string
  let adminKey: string
  let receiver: Server
  const received: Array<{ id: string; type: string }> = []
  let answer = 503

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-webhooks-'))
    dataDir = join(root, 'vault')
    const init = await run(['init', '--data-dir', dataDir, '--json', '--tenant-name', 'Hooks', '--owner-email', 'owner@example.com'])
    adminKey = JSON.parse(init.stdout).application.key
    receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => (body += chunk))
      req.on('end', () => {
        received.push(JSON.parse(body).event)
        res.statusCode = answer
        res.end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  })
  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve))
    await rm(root, { recursive: true, force: true })
  })

  const call = async (served: Served, method: string, path: string, key: string, body?: unknown) => {
    const response = await fetch(served.url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: response.status, body: (await response.json()) as any }
  }
  const waitUntil = async (check: () => boolean | Promise<boolean>, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('timed out')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  it('delivers, after the restart, the event whose delivery failed before it', async () => {
    // The first retry is due after 3 s: long enough that the service is stopped before it.
    const env = { TESSERA_WEBHOOK_RETRY_BASE_MS: '3000' }
    const first = await serve(dataDir, env)
    const port = (receiver.address() as AddressInfo).port
    const webhook = await call(first, 'POST', '/webhooks', adminKey, { name: 'Receiver', url: `http://127.0.0.1:${port}/hook`, events: ['token.created'] })
    expect(webhook.status).toBe(201)
    const app = await call(first, 'POST', '/applications', adminKey, { name: 'Backend', type: 'private', permissions: ['token:create'] })
    const token = await call(first, 'POST', '/tokens', app.body.key, { type: 'token', data: 'secret' })
    expect(token.status).toBe(201)
    await waitUntil(() => received.length === 1)
    expect((await terminate(first)).code).toBe(0)

    answer = 200
    const second = await serve(dataDir, env)
    try {
      await waitUntil(() => received.length === 2)
      expect(received.map((event) => event.id)).toEqual([received[0].id, received[0].id])
      expect(received[1]).toMatchObject({ type: 'token.created', data: { id: token.body.id } })
      const log = async () => (await call(second, 'GET', `/webhooks/${webhook.body.id}/deliveries`, adminKey)).body.data
      await waitUntil(async () => (await log())[0]?.status === 'delivered')
      expect((await log())[0].attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([503, 200])
    } finally {
      await terminate(second)
    }
  })
})
