/**
 * A session never outlives the key it was created or authorized with, whatever
 * order a request made with that key and the key's revocation commit in. The
 * request's key is accepted while the revocation waits in the write queue; the
 * test holds the queue so that the two commit in the order each test names,
 * without timing luck:
 * - the revocation first: the old key is refused (401) and nothing is written;
 * - the request first: the revocation ends the session it made.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { LogEntry } from '../../../src/shared/types'
import { startTestService, type ApiResponse, type TestService } from '../../helpers/service'

interface App {
  id: string
  key: string
}

describe('sessions racing the revocation of the key behind them', () => {
  let service: TestService
  let publicApp: App
  let tokenId: string

  beforeAll(async () => {
    service = await startTestService()
    publicApp = await service.createApplication({ name: 'Checkout page', type: 'public', permissions: ['token:create'] })
    const owner = await service.createApplication({ name: 'Token owner', type: 'private', permissions: ['token:create'] })
    const token = await service.request('POST', '/tokens', { key: owner.key, body: { type: 'token', data: 'behind a session' } })
    expect(token.status).toBe(201)
    tokenId = token.body.id
  })
  afterAll(() => service.stop())

  const newPrivateApp = () => service.createApplication({ name: 'Backend', type: 'private', permissions: ['token:read'] })

  async function newSession(key = publicApp.key) {
    const response = await service.request('POST', '/sessions', { key })
    expect(response.status).toBe(201)
    return response.body as { session_key: string; nonce: string }
  }

  /** What a session key gets: 200 while the session works. */
  const useSession = async (sessionKey: string) => (await service.request('GET', `/tokens/${tokenId}`, { key: sessionKey })).status

  /** The log's session entries of `operation` whose actor is `actorId`. */
  async function sessionEntries(operation: string, actorId: string): Promise<LogEntry[]> {
    const entries: LogEntry[] = (await service.request('GET', '/logs?entity_type=session&size=100')).body.data
    return entries.filter((entry) => entry.operation === operation && entry.actor_id === actorId)
  }

  /**
   * Sends `requests` in order while the write queue is held, each once the one
   * before it has queued its transaction (so each was authenticated, and checked
   * what it checks before its transaction, before any of them committed); then lets
   * the queue go. Their transactions commit in the order sent.
   */
  async function inQueueOrder(...requests: (() => Promise<ApiResponse>)[]): Promise<ApiResponse[]> {
    const { writes } = service.host.vault.services.context
    let holding!: () => void
    let release!: () => void
    const held = new Promise<void>((resolve) => (holding = resolve))
    const holder = writes.run(async () => {
      holding()
      await new Promise<void>((resolve) => (release = resolve))
    })
    await held
    let queued = 0
    const run = writes.run.bind(writes)
    const spy = vi.spyOn(writes, 'run').mockImplementation((work, weight) => {
      queued++
      return run(work, weight)
    })
    const responses: Promise<ApiResponse>[] = []
    try {
      for (const [index, request] of requests.entries()) {
        responses.push(request())
        await vi.waitFor(() => expect(queued).toBe(index + 1), { timeout: 5000 })
      }
    } finally {
      spy.mockRestore()
      release()
    }
    await holder
    return Promise.all(responses)
  }

  it('refuses an authorize with a key whose regenerate committed first (401), authorizes nothing, and logs the refusal', async () => {
    const privateApp = await newPrivateApp()
    const session = await newSession()
    const [regenerated, authorized] = await inQueueOrder(
      () => service.request('POST', `/applications/${privateApp.id}/regenerate`),
      () => service.request('POST', '/sessions/authorize', { key: privateApp.key, body: { nonce: session.nonce, permissions: ['token:read'] } })
    )
    expect(regenerated.status).toBe(200)
    expect(authorized.status).toBe(401)
    // Nothing written: the session is still pending, and the new key may authorize it.
    expect(await useSession(session.session_key)).toBe(401)
    expect(await sessionEntries('authorize', privateApp.id)).toEqual([])
    await service.host.vault.services.denials.flush()
    const refusals: LogEntry[] = (await service.request('GET', '/logs?entity_type=request&size=100')).body.data
    expect(refusals.map((entry) => [entry.entity_id, entry.message.replace(/^.*: /, '')])).toContainEqual(['POST /sessions/authorize', 'unknown key (type key_private)'])
    const newKey = regenerated.body.key as string
    expect((await service.request('POST', '/sessions/authorize', { key: newKey, body: { nonce: session.nonce, permissions: ['token:read'] } })).status).toBe(204)
    expect(await useSession(session.session_key)).toBe(200)
  })

  it('revokes a session authorized with the old key just before the regenerate committed', async () => {
    const privateApp = await newPrivateApp()
    const session = await newSession()
    const [authorized, regenerated] = await inQueueOrder(
      () => service.request('POST', '/sessions/authorize', { key: privateApp.key, body: { nonce: session.nonce, permissions: ['token:read'] } }),
      () => service.request('POST', `/applications/${privateApp.id}/regenerate`)
    )
    expect(authorized.status).toBe(204)
    expect(regenerated.status).toBe(200)
    expect(await useSession(session.session_key)).toBe(401)
  })

  it('refuses a session created with a public key whose regenerate committed first (401), and creates none', async () => {
    const app = await service.createApplication({ name: 'Mobile app', type: 'public', permissions: ['token:create'] })
    const before = (await service.request('GET', '/sessions?size=1')).body.pagination.total_items as number
    const [regenerated, created] = await inQueueOrder(
      () => service.request('POST', `/applications/${app.id}/regenerate`),
      () => service.request('POST', '/sessions', { key: app.key })
    )
    expect(regenerated.status).toBe(200)
    expect(created.status).toBe(401)
    expect(created.body.session_key).toBeUndefined()
    expect((await service.request('GET', '/sessions?size=1')).body.pagination.total_items).toBe(before)
    expect(await sessionEntries('create', app.id)).toEqual([])
  })

  it('revokes a session created with the old public key just before the regenerate committed, so it can never be authorized', async () => {
    const app = await service.createApplication({ name: 'Mobile app', type: 'public', permissions: ['token:create'] })
    const privateApp = await newPrivateApp()
    const [created, regenerated] = await inQueueOrder(
      () => service.request('POST', '/sessions', { key: app.key }),
      () => service.request('POST', `/applications/${app.id}/regenerate`)
    )
    expect(created.status).toBe(201)
    expect(regenerated.status).toBe(200)
    const authorized = await service.request('POST', '/sessions/authorize', { key: privateApp.key, body: { nonce: created.body.nonce, permissions: ['token:read'] } })
    expect(authorized.status).toBe(404)
    expect(await useSession(created.body.session_key)).toBe(401)
  })

  it('refuses an authorize with a key deleted first (401), while the application keeps its other key', async () => {
    const privateApp = await newPrivateApp()
    const other = await service.request('POST', `/applications/${privateApp.id}/keys`)
    expect(other.status).toBe(201)
    const keys = (await service.request('GET', `/applications/${privateApp.id}/keys`)).body as { id: string }[]
    const used = keys.find((key) => key.id !== other.body.id)!
    const session = await newSession()
    const [deleted, authorized] = await inQueueOrder(
      () => service.request('DELETE', `/applications/${privateApp.id}/keys/${used.id}`),
      () => service.request('POST', '/sessions/authorize', { key: privateApp.key, body: { nonce: session.nonce, permissions: ['token:read'] } })
    )
    expect(deleted.status).toBe(204)
    expect(authorized.status).toBe(401)
    expect(await useSession(session.session_key)).toBe(401)
    expect((await service.request('POST', '/sessions/authorize', { key: other.body.key, body: { nonce: session.nonce, permissions: ['token:read'] } })).status).toBe(204)
    expect(await useSession(session.session_key)).toBe(200)
  })

  it('refuses an authorize with the key of an application deleted first (401)', async () => {
    const privateApp = await newPrivateApp()
    const session = await newSession()
    const [deleted, authorized] = await inQueueOrder(
      () => service.request('DELETE', `/applications/${privateApp.id}`),
      () => service.request('POST', '/sessions/authorize', { key: privateApp.key, body: { nonce: session.nonce, permissions: ['token:read'] } })
    )
    expect(deleted.status).toBe(204)
    expect(authorized.status).toBe(401)
    expect(await useSession(session.session_key)).toBe(401)
  })
})
