import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'

describe('HTTP conventions', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService({ bodyLimitBytes: 1024 })
  })
  afterAll(() => service.stop())

  it('answers GET /health without an API key', async () => {
    const response = await service.request('GET', '/health', { key: null })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ status: 'ok' })
  })

  it('answers GET /ping (Basis Theory’s path) without an API key, and does not check one that is sent', async () => {
    for (const key of [null, 'key_private_unknown']) {
      const response = await service.request('GET', '/ping', { key })
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ status: 'ok' })
    }
  })

  it('rejects a request without SVC-API-KEY with a 401 problem document', async () => {
    const response = await service.request('GET', '/logs', { key: null })
    expect(response.status).toBe(401)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    expect(response.body).toMatchObject({ status: 401, title: 'Unauthorized' })
    expect(response.body.detail).toEqual(expect.any(String))
  })

  it('rejects an unknown API key with 401', async () => {
    const response = await service.request('GET', '/logs', { key: 'key_private_nope' })
    expect(response.status).toBe(401)
  })

  // fetch cannot forge Host, so these go through node:http.
  function statusWithHost(host: string): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const url = new URL(service.url)
      httpRequest({ host: url.hostname, port: url.port, path: '/health', headers: { host } }, (res) => {
        res.resume()
        resolve(res.statusCode!)
      })
        .on('error', reject)
        .end()
    })
  }

  it('refuses a Host header that is not a loopback name (DNS rebinding)', async () => {
    expect(await statusWithHost('evil.example')).toBe(421)
    expect(await statusWithHost('evil.example:80')).toBe(421)
    expect(await statusWithHost('[::2]:80')).toBe(421)
  })

  it('refuses a request with two Host lines, whichever comes first', async () => {
    const url = new URL(service.url)
    const send = (first: string, second: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => socket.end(`GET /health HTTP/1.1\r\nHost: ${first}\r\nHost: ${second}\r\nConnection: close\r\n\r\n`))
        let answer = ''
        socket.on('data', (chunk) => (answer += chunk)).on('end', () => resolve(answer.split('\r\n')[0])).on('error', reject)
      })
    expect(await send('localhost', 'evil.example')).toBe('HTTP/1.1 421 Misdirected Request')
    expect(await send('evil.example', 'localhost')).toBe('HTTP/1.1 421 Misdirected Request')
    expect(await statusWithHost('localhost')).toBe(200)
  })

  it('refuses a Host header that only ends in a loopback name: userinfo, lists, bad ports, trailing junk', async () => {
    for (const host of [
      'evil.example:4390@127.0.0.1',
      'evil.example@localhost',
      'user:pass@[::1]:443',
      '127.0.0.1,evil.example',
      'evil.example,127.0.0.1',
      '127.0.0.1:99999',
      '127.0.0.1:',
      'localhost:80:80',
      'localhost:-1',
      'localhost.',
      'localhost/evil',
      '127.0.0.1 evil.example',
      '[::1]evil',
      '[::1',
      '127.0.0.1.nip.io'
    ]) {
      expect(`${host} → ${await statusWithHost(host)}`).toBe(`${host} → 421`)
    }
  })

  it('accepts loopback names with or without a port, in any case', async () => {
    for (const host of ['localhost', 'LOCALHOST:8080', '127.0.0.1:1', '[::1]', '[::1]:443']) {
      expect(await statusWithHost(host), host).toBe(200)
    }
  })

  describe('request body encodings', () => {
    const json = Buffer.from(JSON.stringify({ name: 'Encoded', type: 'private', permissions: ['token:read'] }))

    async function post(body: Buffer, headers: Record<string, string>) {
      const response = await fetch(`${service.url}/applications`, {
        method: 'POST',
        headers: { 'svc-api-key': service.adminKey, 'content-type': 'application/json', ...headers },
        body
      })
      return { status: response.status, type: response.headers.get('content-type'), body: (await response.json()) as { errors?: Record<string, string[]> } }
    }

    it('decodes gzip, deflate and br bodies', async () => {
      for (const [encoding, body] of [['gzip', gzipSync(json)], ['deflate', deflateSync(json)], ['br', brotliCompressSync(json)]] as const) {
        expect((await post(body, { 'content-encoding': encoding })).status, encoding).toBe(201)
      }
    })

    it('answers a body that does not decode as its Content-Encoding says with a 400 naming (body)', async () => {
      const gzip = gzipSync(json)
      for (const [encoding, body] of [
        ['gzip', json],
        ['deflate', json],
        ['br', json],
        ['gzip', gzip.subarray(0, gzip.length - 6)],
        ['gzip', Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff, 0xff, 0xff])],
        ['br', Buffer.from('garbage garbage garbage')]
      ] as const) {
        const response = await post(body, { 'content-encoding': encoding })
        expect(response.status, encoding).toBe(400)
        expect(response.type).toContain('application/problem+json')
        expect(Object.keys(response.body.errors ?? {})).toEqual(['(body)'])
      }
    })

    it('applies the body limit to the decompressed size (413)', async () => {
      const bomb = gzipSync(Buffer.from(JSON.stringify({ name: 'x'.repeat(100_000) })))
      expect(bomb.length).toBeLessThan(1024)
      expect((await post(bomb, { 'content-encoding': 'gzip' })).status).toBe(413)
    })

    it('refuses a __proto__ key anywhere in the body, however it is escaped, with a 400 naming (body), with or without a Content-Encoding', async () => {
      const application = '"name":"Poisoned","type":"private","permissions":["token:read"]'
      for (const text of [
        `{${application},"__proto__":{"admin":true}}`,
        `{${application},"metadata":[{"\\u005f_pro\\u0074o__":{}}]}`,
        `[{"__proto__" : 1}]`
      ]) {
        for (const [encoding, body] of [['identity', Buffer.from(text)], ['gzip', gzipSync(text)]] as const) {
          const response = await post(body, { 'content-encoding': encoding })
          expect(response.status, `${encoding} ${text}`).toBe(400)
          expect(response.body.errors, `${encoding} ${text}`).toEqual({ '(body)': ['is not valid JSON'] })
        }
      }
      // A key that only mentions the name, or the name as a value, is ordinary data (the schema's own errors follow).
      expect((await post(Buffer.from(`{${application},"x":"__proto__"}`), {})).body.errors).toHaveProperty('x')
    })

    /** POSTs `chunks` to /applications chunked (no Content-Length), through node:http. */
    function postChunked(chunks: (string | Buffer)[]): Promise<{ status: number; body: { errors?: Record<string, string[]> } }> {
      return new Promise((resolve, reject) => {
        const url = new URL(service.url)
        const request = httpRequest(
          { host: url.hostname, port: url.port, path: '/applications', method: 'POST', headers: { 'svc-api-key': service.adminKey, 'content-type': 'application/json' } },
          (res) => {
            let text = ''
            res.on('data', (chunk: Buffer) => (text += chunk.toString()))
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as { errors?: Record<string, string[]> } }))
          }
        ).on('error', reject)
        for (const chunk of chunks) request.write(chunk)
        request.end()
      })
    }

    it('reads a body sent in chunks, with a UTF-8 character and the byte order mark split across them', async () => {
      const text = Buffer.from(`\ufeff${JSON.stringify({ name: 'Chunked é', type: 'private', permissions: ['token:read'] })}`)
      const accent = text.indexOf(Buffer.from('é'))
      expect((await postChunked([text.subarray(0, 1), text.subarray(1, accent + 1), text.subarray(accent + 1)])).status).toBe(201)
      expect((await post(text, {})).status).toBe(201)
      const listed = await service.request('GET', '/applications', {})
      expect(listed.body.data.filter((app: { name: string }) => app.name === 'Chunked é')).toHaveLength(2)
    })

    it('applies the body limit to a body sent in chunks (413), and answers an empty one with a 400 naming (body)', async () => {
      const over = await postChunked(['{"name":"', 'x'.repeat(600), 'x'.repeat(600), '"}'])
      expect(over.status).toBe(413)
      const empty = await postChunked([])
      expect(empty.status).toBe(400)
      expect(Object.keys(empty.body.errors ?? {})).toEqual(['(body)'])
    })

    it('answers an unknown Content-Encoding or a charset other than UTF-8 with a 415 problem document', async () => {
      const cases: Record<string, string>[] = [
        { 'content-encoding': 'compress' },
        { 'content-encoding': 'x-nope' },
        { 'content-encoding': 'gzip, gzip' },
        { 'content-encoding': 'GZIP' },
        { 'content-type': 'application/json; charset=utf-16' },
        { 'content-type': 'application/json; charset=latin1' },
        { 'content-type': 'application/json; charset=x-nope' }
      ]
      for (const headers of cases) {
        const response = await post(json, headers)
        expect(response.status, JSON.stringify(headers)).toBe(415)
        expect(response.type).toContain('application/problem+json')
      }
      expect((await post(json, { 'content-type': 'application/json; charset=UTF-8' })).status).toBe(201)
    })
  })

  it('sends Cache-Control: no-store on every response, errors included', async () => {
    const created = await service.request('POST', '/applications', { body: { name: 'Cached?', type: 'private', permissions: ['token:create', 'token:read'] } })
    const token = await service.request('POST', '/tokens', { key: created.body.key, body: { type: 'token', data: 'plaintext' } })
    const responses = [
      created,
      token,
      await service.request('GET', `/tokens/${token.body.id}`, { key: created.body.key }),
      await service.request('GET', '/health', { key: null }),
      await service.request('GET', '/logs', { key: null }),
      await service.request('GET', '/nope'),
      await service.request('DELETE', '/health'),
      await service.request('POST', '/applications', { rawBody: 'x', contentType: 'text/plain' }),
      await service.request('POST', '/applications', { body: { name: 'x'.repeat(2000) } }),
      await service.request('GET', '/invitations/accept?token=inv_unknown', { key: null })
    ]
    expect(new Set(responses.map((response) => response.status)).size).toBeGreaterThan(6)
    for (const response of responses) expect(response.headers.get('cache-control'), String(response.status)).toBe('no-store')
    const misdirected = await new Promise<string | undefined>((resolve, reject) => {
      const url = new URL(service.url)
      httpRequest({ host: url.hostname, port: url.port, path: '/health', headers: { host: 'evil.example' } }, (res) => {
        res.resume()
        resolve(res.headers['cache-control'])
      })
        .on('error', reject)
        .end()
    })
    expect(misdirected).toBe('no-store')
  })

  it('answers a wrong method on an open route with a 405 problem document', async () => {
    const response = await service.request('DELETE', '/health')
    expect(response.status).toBe(405)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
  })

  it('authenticates before telling an unknown route apart (401 without a key)', async () => {
    const response = await service.request('GET', '/nope', { key: null })
    expect(response.status).toBe(401)
  })

  it('answers an unknown route with a 404 problem document', async () => {
    const response = await service.request('GET', '/nope')
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
  })

  it('answers a wrong method on a resource route with a 405, and under the same first segment an unknown path with a 404', async () => {
    expect((await service.request('PUT', '/logs')).status).toBe(405)
    expect((await service.request('GET', '/logs/nope/deeper')).status).toBe(404)
    expect((await service.request('GET', '/tenants/self/nope')).status).toBe(404)
  })

  it('matches paths exactly as the API document states them: /LOGS is not /logs', async () => {
    expect((await service.request('GET', '/LOGS?size=1')).status).toBe(404)
    expect((await service.request('GET', '/logs?size=1')).status).toBe(200)
  })
})
