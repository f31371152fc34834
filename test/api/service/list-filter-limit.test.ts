/**
 * Repeatable list filters (`?id=a&id=b`) take at most 100 values, the largest
 * page size: more is a 400 naming the filter, never a 500 from the database's
 * limit on statement parameters.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'

describe('repeatable list filters', () => {
  let service: TestService
  let reader: string
  beforeAll(async () => {
    service = await startTestService()
    reader = (await service.createApplication({ name: 'Reader', type: 'private', permissions: ['token:read'] })).key
  })
  afterAll(() => service.stop())

  const query = (name: string, values: string[]) => values.map((value) => `${name}=${encodeURIComponent(value)}`).join('&')

  it.each([
    ['/tokens', 'id', () => 'a'],
    ['/tokens', 'type', () => 'token'],
    ['/applications', 'id', () => randomUUID()],
    ['/tenants/self/members', 'user_id', () => randomUUID()]
  ])('GET %s refuses 101 values of %s with a 400 naming it, and takes 100', async (path, name, value) => {
    const key = path === '/tokens' ? reader : undefined
    const over = await service.request('GET', `${path}?${query(name, Array.from({ length: 101 }, value))}`, { key })
    expect(over.status).toBe(400)
    expect(over.body.errors).toEqual({ [name]: ['must list at most 100 values'] })
    const at = await service.request('GET', `${path}?${query(name, Array.from({ length: 100 }, value))}`, { key })
    expect(at.status).toBe(200)
  })
})
