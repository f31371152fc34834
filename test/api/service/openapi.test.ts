import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openApiDocument } from '../../../src/main/server/openapi'
import { startTestService, type TestService } from '../../helpers/service'

describe('GET /openapi.json', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService()
  })
  afterAll(() => service.stop())

  it('serves the OpenAPI 3.1 document without an API key', async () => {
    const response = await service.request('GET', '/openapi.json', { key: null })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('application/json')
    expect(response.body).toEqual(JSON.parse(JSON.stringify(openApiDocument())))
    expect(response.body).toMatchObject({ openapi: '3.1.0', components: { securitySchemes: { 'SVC-API-KEY': { type: 'apiKey', in: 'header', name: 'SVC-API-KEY' } } } })
  })

  it('ignores a key, even an invalid one', async () => {
    expect((await service.request('GET', '/openapi.json', { key: 'key_private_nope' })).status).toBe(200)
  })

  it('answers another method with a 405 problem document', async () => {
    const response = await service.request('POST', '/openapi.json', { body: {} })
    expect(response.status).toBe(405)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
  })
})
