import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ApplicationListQuery } from '@shared/ipc'
import type { Application } from '@shared/types'
import { setApi } from '@renderer/api'
import { useApplicationsStore } from '@renderer/stores/applications'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { fakeApi, pageOf, problem } from '../fake-api'

const application = (id: string, extra: Partial<Application> = {}): Application => ({
  id,
  tenant_id: 't',
  name: `App ${id}`,
  type: 'private',
  permissions: ['token:read'],
  rules: [],
  created_at: '2026-11-25T10:00:00.000Z',
  keys: [],
  ...extra
})

describe('useApplicationsStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => setApi(undefined))

  it('filters by type from the first page, and lists every type again when cleared', async () => {
    const list = vi.fn(async (_query: ApplicationListQuery) => pageOf([application('a')], 61))
    setApi(fakeApi({ applications: { list } }))
    const store = useApplicationsStore()
    await store.setPage(3)
    await store.setFilters({ types: ['public', 'management'] })
    expect(list).toHaveBeenLastCalledWith({ page: 1, size: 20, type: ['public', 'management'] })
    await store.setFilters({ types: [] })
    expect(list).toHaveBeenLastCalledWith({ page: 1, size: 20 })
    expect(store.pagination.prefix()).toBe('61 applications')
  })

  it('shows the key of a new application once, lists again, and forgets the key when its dialog closes', async () => {
    const list = vi.fn(async () => pageOf([application('a')]))
    const create = vi.fn(async () => application('a', { name: 'Checkout', key: 'key_private_secret' }))
    setApi(fakeApi({ applications: { list, create } }))
    const store = useApplicationsStore()
    expect(await store.create({ name: 'Checkout', type: 'private', permissions: ['token:read'], rules: [] })).toBe(true)
    expect(store.shownKey).toEqual({ name: 'Checkout', key: 'key_private_secret', regenerated: false })
    expect(list).toHaveBeenCalledTimes(1)
    store.dismissKey()
    expect(store.shownKey).toBeUndefined()
  })

  it('says a new or saved application is in before reading the list again, so that its form can close at once', async () => {
    const events: string[] = []
    const list = vi.fn(async () => (events.push('list'), pageOf([application('a')])))
    const create = vi.fn(async () => (events.push('create'), application('a', { key: 'key_private_secret' })))
    const update = vi.fn(async () => (events.push('update'), application('a')))
    setApi(fakeApi({ applications: { list, create, update } }))
    const store = useApplicationsStore()
    expect(await store.create({ name: 'Checkout', type: 'private', permissions: [], rules: [] }, () => events.push('created'))).toBe(true)
    expect(await store.update('a', { name: 'Checkout 2' }, () => events.push('saved'))).toBe(true)
    expect(events).toEqual(['create', 'created', 'list', 'update', 'saved', 'list'])
  })

  it('shows a regenerated key as new', async () => {
    setApi(fakeApi({ applications: { regenerate: vi.fn(async (id: string) => application(id, { key: 'key_private_new' })) } }))
    const store = useApplicationsStore()
    expect(await store.regenerate(application('a'))).toBe(true)
    expect(store.shownKey).toEqual({ name: 'App a', key: 'key_private_new', regenerated: true })
  })

  it('opens an application\'s keys, adds one (shown once) beside the others, and deletes one, listing the keys again each time', async () => {
    const first = { id: 'k1', created_at: '2026-11-25T10:00:00.000Z' }
    const second = { id: 'k2', created_at: '2026-11-25T11:00:00.000Z' }
    let keys = [first]
    const listKeys = vi.fn(async () => keys)
    const createKey = vi.fn(async () => {
      keys = [first, second]
      return { ...second, key: 'key_private_added' }
    })
    const deleteKey = vi.fn(async () => {
      keys = [second]
    })
    setApi(fakeApi({ applications: { listKeys, createKey, deleteKey } }))
    const store = useApplicationsStore()
    expect(await store.showKeys(application('a'))).toBe(true)
    expect(store.openKeys).toEqual({ application: application('a'), keys: [first] })
    expect(await store.addKey()).toBe(true)
    expect(createKey).toHaveBeenCalledWith('a')
    expect(store.shownKey).toEqual({ name: 'App a', key: 'key_private_added', regenerated: false, added: true })
    expect(store.openKeys?.keys).toEqual([first, second])
    expect(await store.deleteKey(first)).toBe(true)
    expect(deleteKey).toHaveBeenCalledWith('a', 'k1')
    expect(store.openKeys?.keys).toEqual([second])
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'success', title: 'Key deleted' })])
    store.closeKeys()
    expect(store.openKeys).toBeUndefined()
  })

  it('saves and deletes with a toast each, reading the list again', async () => {
    const list = vi.fn(async () => pageOf<Application>([]))
    setApi(fakeApi({ applications: { list, update: vi.fn(async (id: string) => application(id)), delete: vi.fn(async () => undefined) } }))
    const store = useApplicationsStore()
    expect(await store.update('a', { name: 'Renamed' })).toBe(true)
    expect(await store.remove(application('a'))).toBe(true)
    expect(list).toHaveBeenCalledTimes(2)
    expect(useNotificationsStore().queue).toEqual([
      expect.objectContaining({ kind: 'success', title: 'Application saved' }),
      expect.objectContaining({ kind: 'success', title: 'Application deleted', detail: 'App a and its keys no longer work.' })
    ])
  })

  it('names the field a refused creation got wrong, keeps the form open and shows no key', async () => {
    const create = vi.fn(async () => Promise.reject(problem(400, 'The request has invalid fields.', { name: ['must not be empty'] })))
    setApi(fakeApi({ applications: { create } }))
    const store = useApplicationsStore()
    expect(await store.create({ name: '', type: 'private', permissions: [], rules: [] })).toBe(false)
    expect(store.shownKey).toBeUndefined()
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'error', title: 'Creating the application failed', fields: ['name: must not be empty'] })])
  })

  it('lists the applications of one type for pickers, and none when that fails', async () => {
    const list = vi.fn(async (query: ApplicationListQuery) => pageOf([application('p', { type: query.type![0] })]))
    setApi(fakeApi({ applications: { list } }))
    const store = useApplicationsStore()
    expect(await store.listOfType('public')).toEqual([application('p', { type: 'public' })])
    expect(list).toHaveBeenCalledWith({ type: ['public'], size: 100 })
    list.mockRejectedValueOnce(problem(503, 'The vault is locked.'))
    expect(await store.listOfType('public')).toEqual([])
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ title: 'Loading applications failed' })])
  })
})
