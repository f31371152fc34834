import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ProblemError } from '@renderer/api'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { problem } from '../fake-api'

const locked = () => new ProblemError({ type: 'about:blank', title: 'Service Unavailable', status: 503, code: 'vault_locked', detail: 'The vault is locked.' })

describe('useNotificationsStore', () => {
  beforeEach(() => setActivePinia(createPinia()))

  it('queues toasts until they are drained', () => {
    const store = useNotificationsStore()
    store.notify('Token created', 'tok_1')
    store.reportError(new Error('boom'), 'Loading tokens')
    expect(store.drain().map((notice) => [notice.kind, notice.title])).toEqual([
      ['success', 'Token created'],
      ['error', 'Loading tokens failed']
    ])
    expect(store.queue).toEqual([])
  })

  it('announces every notice once for screen readers: successes politely, errors at once', () => {
    const store = useNotificationsStore()
    store.notify('Token created', 'tok_1')
    expect(store.announcement).toMatchObject({ text: 'Token created. tok_1', politeness: 'polite' })
    store.reportError(new Error('boom'), 'Loading tokens')
    expect(store.announcement).toMatchObject({ text: 'Loading tokens failed. Something went wrong. Try again.', politeness: 'assertive' })
    const before = store.announcement!.id
    store.notify('Token created', 'tok_1')
    expect(store.announcement!.id).not.toBe(before)
  })

  it("shows a problem's own title and field errors when no action is named", () => {
    const store = useNotificationsStore()
    store.reportError(problem(400, 'The request has invalid fields.', { 'data.number': ['fails the Luhn check'] }))
    expect(store.queue).toEqual([
      expect.objectContaining({ kind: 'error', title: 'Bad Request', detail: 'The request has invalid fields.', fields: ['data.number: fails the Luhn check'] })
    ])
  })

  it('tells its listeners when a call found the vault locked, and only then', () => {
    const store = useNotificationsStore()
    const listener = vi.fn()
    store.onVaultLocked(listener)
    store.reportError(problem(400, 'Bad'))
    expect(listener).not.toHaveBeenCalled()
    store.reportError(locked(), 'Loading tokens')
    expect(listener).toHaveBeenCalledTimes(1)
    expect(store.queue.at(-1)).toMatchObject({ title: 'Loading tokens failed', detail: 'The vault is locked.' })
  })
})
