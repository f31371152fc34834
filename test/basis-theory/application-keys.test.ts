/**
 * Application keys through Basis Theory's official SDK, with nothing but the
 * base URL and a management key.
 */
import { BasisTheoryClient } from '@basis-theory/node-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'

describe('application keys through the Basis Theory SDK', () => {
  let service: TestService
  let client: BasisTheoryClient
  beforeAll(async () => {
    service = await startTestService()
    client = new BasisTheoryClient({ apiKey: service.adminKey, environment: service.url })
  })
  afterAll(() => service.stop())

  /** Whether `apiKey` authenticates: a token read that is either refused (401) or answered. */
  async function authenticates(apiKey: string): Promise<boolean> {
    const caller = new BasisTheoryClient({ apiKey, environment: service.url })
    const outcome = await caller.tokens.create({ type: 'token', data: 'x' }).then(
      () => 'ok',
      (error: unknown) => (error as { statusCode?: number }).statusCode
    )
    return outcome !== 401
  }

  it('creates an application with its first key, listed in keys', async () => {
    const application = await client.applications.create({ name: 'Checkout', type: 'private', permissions: ['token:create'], createKey: true })
    expect(application.key).toMatch(/^key_private_/)
    expect(application.keys).toEqual([expect.objectContaining({ id: expect.any(String), key: application.key, createdAt: expect.any(Date) })])
    expect(await authenticates(application.key!)).toBe(true)
  })

  it('creates an application without a key when createKey is false', async () => {
    const application = await client.applications.create({ name: 'Later', type: 'private', permissions: ['token:create'], createKey: false })
    expect(application.key).toBeUndefined()
    expect(application.keys).toEqual([])
  })

  it('creates, lists, gets and deletes keys; a deleted key is refused at once, the others keep working', async () => {
    const application = await client.applications.create({ name: 'Rotating', type: 'private', permissions: ['token:create'] })
    service.clock.advance(1000) // keys are listed oldest first
    const added = await client.applicationKeys.create(application.id!)
    expect(added.key).toMatch(/^key_private_/)
    expect(await authenticates(added.key!)).toBe(true)
    expect(await authenticates(application.key!)).toBe(true)

    const listed = await client.applicationKeys.list(application.id!)
    expect(listed.map((key) => key.id)).toEqual([application.keys![0].id, added.id])
    for (const key of listed) expect(key.key).toBeUndefined()
    const one = await client.applicationKeys.get(application.id!, added.id!)
    expect(one).toMatchObject({ id: added.id, createdAt: added.createdAt })
    expect(one.key).toBeUndefined()

    await client.applicationKeys.delete(application.id!, application.keys![0].id!)
    expect(await authenticates(application.key!)).toBe(false)
    expect(await authenticates(added.key!)).toBe(true)
    await expect(client.applicationKeys.get(application.id!, application.keys![0].id!)).rejects.toMatchObject({ statusCode: 404 })
  })

  it('shows keys without values on get and list', async () => {
    const application = await client.applications.create({ name: 'Shown', type: 'private', permissions: ['token:create'] })
    const read = await client.applications.get(application.id!)
    expect(read.key).toBeUndefined()
    expect(read.keys).toEqual([{ id: application.keys![0].id, createdBy: application.createdBy, createdAt: application.keys![0].createdAt }])
    const page = await client.applications.list({ id: application.id! })
    expect(page.data[0].keys).toHaveLength(1)
  })
})
