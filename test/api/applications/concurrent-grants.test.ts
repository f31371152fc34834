/**
 * A change to an application is judged against the application as the change's
 * transaction finds it. Each test lets the caller's checks read the target, then
 * commits a grant of `log:read` to the target (which the caller lacks) before the
 * caller's transaction runs, as a concurrent `PUT /applications/{id}` may: the
 * caller must then be refused, as it is when the grant came first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'
import { updateApplication } from '../../../src/main/storage/repositories/applications.repository'
import { sql } from '../../../src/main/storage/connections'

describe('application changes racing a grant', () => {
  let service: TestService
  /** A management key that may read, update and delete applications, but not read logs. */
  let callerKey: string

  beforeAll(async () => {
    service = await startTestService()
    callerKey = (await service.createApplication({ name: 'Caller', type: 'management', permissions: ['application:read', 'application:update', 'application:delete'] })).key
  })
  afterAll(() => service.stop())

  /**
   * Sends the caller's request for `target`; once its checks have read the target, commits
   * `log:read` to the target in the write queue's transaction ahead of the caller's.
   */
  async function racingGrant(target: string, method: string, path: string, body?: unknown) {
    const { writes } = service.host.vault.services.context
    const reader = sql(service.host.vault.services.context.reader)
    let targetRead!: () => void
    const read = new Promise<void>((resolve) => (targetRead = resolve))
    const onQuery = (_response: unknown, query: { sql: string; bindings?: unknown[] }) => {
      if (query.sql.includes('applications') && query.bindings?.includes(target)) targetRead()
    }
    reader.on('query-response', onQuery)
    try {
      const grant = writes.run(async (trx) => {
        await read
        await updateApplication(trx, service.tenantId, target, { permissions: ['application:read', 'log:read'] })
      })
      const response = await service.request(method, path, { key: callerKey, body })
      await grant
      return response
    } finally {
      reader.off('query-response', onQuery)
    }
  }

  const newTarget = () => service.createApplication({ name: 'Target', type: 'management', permissions: ['application:read'] })
  const keysOf = async (id: string) => (await service.request('GET', `/applications/${id}/keys`)).body as { id: string }[]

  it('refuses a regenerate: no key is made for the application that now reads logs', async () => {
    const target = await newTarget()
    const response = await racingGrant(target.id, 'POST', `/applications/${target.id}/regenerate`)
    expect(response.status).toBe(403)
    expect(response.body.key).toBeUndefined()
    expect((await service.request('GET', '/logs?size=1', { key: target.key })).status).toBe(200)
    expect(await keysOf(target.id)).toHaveLength(1)
  })

  it('refuses a new key', async () => {
    const target = await newTarget()
    const response = await racingGrant(target.id, 'POST', `/applications/${target.id}/keys`)
    expect(response.status).toBe(403)
    expect(await keysOf(target.id)).toHaveLength(1)
  })

  it('refuses to replace the grant', async () => {
    const target = await newTarget()
    const response = await racingGrant(target.id, 'PUT', `/applications/${target.id}`, { name: 'Stripped', permissions: ['application:read'] })
    expect(response.status).toBe(403)
    const kept = (await service.request('GET', `/applications/${target.id}`)).body
    expect([kept.name, kept.permissions]).toEqual(['Target', ['application:read', 'log:read']])
  })

  it('refuses to delete one of its keys', async () => {
    const target = await newTarget()
    const [key] = await keysOf(target.id)
    const response = await racingGrant(target.id, 'DELETE', `/applications/${target.id}/keys/${key.id}`)
    expect(response.status).toBe(403)
    expect((await service.request('GET', '/logs?size=1', { key: target.key })).status).toBe(200)
  })

  it('refuses to delete it', async () => {
    const target = await newTarget()
    const response = await racingGrant(target.id, 'DELETE', `/applications/${target.id}`)
    expect(response.status).toBe(403)
    expect((await service.request('GET', `/applications/${target.id}`)).status).toBe(200)
  })
})
