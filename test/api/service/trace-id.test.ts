import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe('BT-TRACE-ID', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService()
  })
  afterAll(() => service.stop())

  it('echoes the trace id the request sent, on success and on every kind of error', async () => {
    const headers = { 'bt-trace-id': 'checkout-7f3a 2026/11/26' }
    const responses = await Promise.all([
      service.request('GET', '/tenants/self', { headers }),
      service.request('GET', '/tokens', { headers }),
      service.request('GET', '/tokens', { headers, key: null }),
      service.request('GET', '/tokens/unknown-id', { headers }),
      service.request('POST', '/tokens', { headers, body: { type: 'nope' } }),
      service.request('GET', '/no-such-route', { headers })
    ])
    expect(responses.map((response) => response.status)).toEqual([200, 403, 401, 404, 400, 404])
    for (const response of responses) expect(response.headers.get('bt-trace-id')).toBe('checkout-7f3a 2026/11/26')
  })

  it('generates a new one for each request that sends none', async () => {
    const [first, second] = await Promise.all([service.request('GET', '/health'), service.request('GET', '/health')])
    expect(first.headers.get('bt-trace-id')).toMatch(UUID)
    expect(second.headers.get('bt-trace-id')).toMatch(UUID)
    expect(first.headers.get('bt-trace-id')).not.toBe(second.headers.get('bt-trace-id'))
  })

  it('replaces one too long or not printable ASCII with a generated one', async () => {
    for (const sent of ['x'.repeat(129), 'caf\u00e9', 'tab\there']) {
      const response = await service.request('GET', '/health', { headers: { 'bt-trace-id': sent } })
      expect(response.headers.get('bt-trace-id')).toMatch(UUID)
    }
    const longest = 'x'.repeat(128)
    expect((await service.request('GET', '/health', { headers: { 'bt-trace-id': longest } })).headers.get('bt-trace-id')).toBe(longest)
  })

  it('lets a browser on an allowed origin send it and read it back', async () => {
    const cors = await startTestService({ corsOrigins: ['https://shop.example.com'] })
    try {
      const origin = 'https://shop.example.com'
      const preflight = await fetch(`${cors.url}/tokens`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'bt-api-key,bt-trace-id' } })
      expect(preflight.headers.get('access-control-allow-headers')).toContain('BT-TRACE-ID')
      const response = await cors.request('GET', '/health', { headers: { origin, 'bt-trace-id': 'browser-1' } })
      expect(response.headers.get('access-control-expose-headers')).toBe('BT-TRACE-ID')
      expect(response.headers.get('bt-trace-id')).toBe('browser-1')
    } finally {
      await cors.stop()
    }
  })
})
