import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ApplicationListQuery, PageQuery } from '@shared/ipc'
import type { Application, Session } from '@shared/types'
import { setApi } from '@renderer/api'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { useSessionsStore } from '@renderer/stores/sessions'
import { fakeApi, pageOf, problem } from '../fake-api'

const session = (id: string, status: Session['status'] = 'PENDING'): Session => ({
  id,
  tenant_id: 't',
  application_id: 'app-page',
  status,
  permissions: [],
  rules: [],
  expires_at: '2026-11-25T12:03:00.000Z',
  created_at: '2026-11-25T12:00:00.000Z'
})
const application = (id: string, name: string, type: Application['type']): Application => ({ id, tenant_id: 't', name, type, permissions: [], rules: [], created_at: '2026-11-25T10:00:00.000Z', keys: [] })

describe('useSessionsStore', () => {
  let listed: Session[]
  const list = vi.fn(async ({ page = 1, size = 20 }: PageQuery) => pageOf(listed.slice((page - 1) * size, page * size), listed.length, page, size))

  beforeEach(() => {
    setActivePinia(createPinia())
    listed = []
    list.mockClear()
  })
  afterEach(() => setApi(undefined))

  it('keeps the key and nonce of a session made here in memory only, and lists from the first page', async () => {
    const create = vi.fn(async () => {
      listed = [session('s1'), ...listed]
      return { id: 's1', session_key: 'key_session_secret', nonce: 'nonce_secret', expires_at: '2026-11-25T12:03:00.000Z' }
    })
    setApi(fakeApi({ sessions: { list, create } }))
    const store = useSessionsStore()
    await store.setPage(2)
    expect(await store.create('app-page')).toEqual({ sessionKey: 'key_session_secret', nonce: 'nonce_secret' })
    expect(create).toHaveBeenCalledWith('app-page')
    expect(store.secrets).toEqual({ s1: { sessionKey: 'key_session_secret', nonce: 'nonce_secret' } })
    expect(list).toHaveBeenLastCalledWith({ page: 1, size: 20 })
    expect(store.items.map((s) => s.id)).toEqual(['s1'])
  })

  it('authorizes a nonce as a private application with the grant, and says the key now works', async () => {
    listed = [session('s1')]
    const authorize = vi.fn(async () => {
      listed = [session('s1', 'AUTHORIZED')]
    })
    setApi(fakeApi({ sessions: { list, authorize } }))
    const store = useSessionsStore()
    expect(await store.authorize('nonce_secret', 'app-backend', { permissions: ['token:create'] })).toBe(true)
    expect(authorize).toHaveBeenCalledWith('app-backend', { nonce: 'nonce_secret', permissions: ['token:create'] })
    expect(store.items[0].status).toBe('AUTHORIZED')
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ title: 'Session authorized' })])
  })

  it('forgets the secrets of a revoked session, and shows the page before when its page has emptied', async () => {
    listed = Array.from({ length: 21 }, (_, i) => session(`s${i}`))
    const create = vi.fn(async () => ({ id: 's20', session_key: 'key_session_secret', nonce: 'nonce_secret', expires_at: '' }))
    const revoke = vi.fn(async (id: string) => {
      listed = listed.filter((s) => s.id !== id)
    })
    setApi(fakeApi({ sessions: { list, create, revoke } }))
    const store = useSessionsStore()
    await store.create('app-page')
    await store.setPage(2)
    expect(await store.revoke(session('s20'))).toBe(true)
    expect(store.secrets).toEqual({})
    expect(store.page).toBe(1)
    expect(store.items).toHaveLength(20)
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ title: 'Session revoked', detail: 'Its key is refused from now on.' })])
  })

  it('keeps the secrets when a revocation fails, and is no longer busy', async () => {
    setApi(
      fakeApi({
        sessions: {
          create: vi.fn(async () => ({ id: 's1', session_key: 'k', nonce: 'n', expires_at: '' })),
          list,
          revoke: vi.fn(async () => Promise.reject(problem(404, 'No such session.')))
        }
      })
    )
    const store = useSessionsStore()
    await store.create('app-page')
    expect(await store.revoke(session('s1'))).toBe(false)
    expect(Object.keys(store.secrets)).toEqual(['s1'])
    expect(store.busy).toBe(false)
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ title: 'Revoking the session failed', detail: 'No such session.' })])
  })

  it('names applications from the pickers, and falls back to the id of one it does not know', async () => {
    const applications = vi.fn(async (query: ApplicationListQuery) =>
      pageOf([application('app-page', 'Payment form', 'public'), application('app-backend', 'Checkout backend', 'private')].filter((a) => query.type?.includes(a.type)))
    )
    setApi(fakeApi({ applications: { list: applications } }))
    const store = useSessionsStore()
    await store.loadApplications()
    expect(store.publicApplications.map((a) => a.name)).toEqual(['Payment form'])
    expect(store.privateApplications.map((a) => a.name)).toEqual(['Checkout backend'])
    expect([store.applicationName('app-page'), store.applicationName('app-gone'), store.applicationName(undefined)]).toEqual(['Payment form', 'app-gone', '—'])
  })
})
