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
})
