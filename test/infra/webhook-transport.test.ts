/**
 * The webhook transport's guard against server-side request forgery: a host is
 * judged by every address it resolves to (never by its name alone), loopback is
 * always allowed, other addresses only when listed, and the connection goes to
 * the address that was checked. Redirects are not followed.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseWebhookAllowList, sendWebhook, type Resolver } from '../../src/main/infra/webhook-transport'

describe('webhook transport', () => {
  let server: Server
  let port: number
  const hits: string[] = []
  let status = 200

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.headers.host ?? '')
      res.statusCode = status
      if (status === 302) res.setHeader('location', 'http://127.0.0.1:1/elsewhere')
      res.end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const resolver =
    (addresses: string[]): Resolver =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  const send = (url: string, allowed: string[] = [], resolve?: Resolver) => sendWebhook({ url, body: '{}', headers: {}, timeoutMs: 2000 }, parseWebhookAllowList(allowed), resolve)

  it('delivers to loopback, whatever name resolves to it, connecting to the checked address', async () => {
    hits.length = 0
    status = 200
    expect(await send(`http://hooks.internal.test:${port}/x`, [], resolver(['127.0.0.1']))).toEqual({ outcome: 'delivered', statusCode: 200 })
    expect(hits).toEqual([`hooks.internal.test:${port}`])
  })

  it('blocks a name that resolves to a private address, and one that resolves to loopback and a private address', async () => {
    expect(await send(`http://localhost.attacker.test:${port}/x`, [], resolver(['10.0.0.5']))).toEqual({ outcome: 'blocked', error: 'HOST_NOT_ALLOWED' })
    expect(await send(`http://mixed.attacker.test:${port}/x`, [], resolver(['127.0.0.1', '10.0.0.5']))).toEqual({ outcome: 'blocked', error: 'HOST_NOT_ALLOWED' })
  })

  it('blocks private, link-local and metadata addresses given as literals unless listed', async () => {
    for (const url of ['http://10.1.2.3/x', 'http://169.254.169.254/latest/meta-data', 'http://[fd00::1]/x', 'http://192.168.1.1/x']) {
      expect(await send(url), url).toEqual({ outcome: 'blocked', error: 'HOST_NOT_ALLOWED' })
    }
  })

  it('allows a listed name, or an address in a listed range', async () => {
    hits.length = 0
    expect((await send(`http://hooks.example.com:${port}/x`, ['hooks.example.com'], resolver(['127.0.0.1']))).outcome).toBe('delivered')
    const viaRange = await send(`http://hooks.example.org:${port}/x`, ['127.0.0.0/8'], resolver(['127.0.0.1']))
    expect(viaRange.outcome).toBe('delivered')
    expect(await send('http://other.example.com/x', ['hooks.example.com'], resolver(['10.0.0.5']))).toEqual({ outcome: 'blocked', error: 'HOST_NOT_ALLOWED' })
  })

  it('does not follow a redirect, and reports other answers by status', async () => {
    status = 302
    expect(await send(`http://127.0.0.1:${port}/x`)).toEqual({ outcome: 'failed', statusCode: 302, error: 'REDIRECT_NOT_FOLLOWED' })
    status = 500
    expect(await send(`http://127.0.0.1:${port}/x`)).toEqual({ outcome: 'failed', statusCode: 500, error: 'HTTP_500' })
    status = 200
  })

  it('reports a refused connection and an unresolvable name by their codes', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const closedPort = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    expect(await send(`http://127.0.0.1:${closedPort}/x`)).toEqual({ outcome: 'failed', error: 'ECONNREFUSED' })
    const failing: Resolver = async () => {
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    }
    expect(await send('http://nowhere.invalid/x', [], failing)).toEqual({ outcome: 'failed', error: 'ENOTFOUND' })
  })

  it('refuses an allow-list entry that is no host, address or range', () => {
    expect(() => parseWebhookAllowList(['hooks.example.com', 'not a host'])).toThrow(/not a host name/)
  })
})
