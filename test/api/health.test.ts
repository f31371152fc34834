import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'

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
})
