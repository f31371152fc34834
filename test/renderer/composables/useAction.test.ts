import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { useAction } from '@renderer/composables/useAction'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { problem } from '../fake-api'

/** A promise the test settles by hand, to look at `busy` while the work runs. */
function deferred<T>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)))
  return { promise, resolve, reject }
}

describe('useAction', () => {
  beforeEach(() => setActivePinia(createPinia()))

  it('resolves true after a success and announces it from the result, then runs what follows', async () => {
    const { run } = useAction()
    const after = vi.fn(async () => expect(useNotificationsStore().queue).toHaveLength(1))
    const done = await run('Creating the token', async () => ({ id: 'tok_1' }), { success: (token) => ({ title: 'Token created', detail: token.id }), after })
    expect(done).toBe(true)
    expect(after).toHaveBeenCalledTimes(1)
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'success', title: 'Token created', detail: 'tok_1' })])
  })

  it('shows nothing for a success that does not ask to be announced', async () => {
    const { run } = useAction()
    expect(await run('Loading tokens', async () => undefined)).toBe(true)
    expect(useNotificationsStore().queue).toEqual([])
  })

  it('turns a failure into one error toast named after the action, resolves false and skips the rest', async () => {
    const { run } = useAction()
    const failed = vi.fn()
    const after = vi.fn()
    const error = problem(409, 'Data key version 1 still seals 12 tokens.')
    const done = await run('Retiring data key version 1', () => Promise.reject(error), { success: () => ({ title: 'never' }), after, failed })
    expect(done).toBe(false)
    expect(failed).toHaveBeenCalledWith(error)
    expect(after).not.toHaveBeenCalled()
    expect(useNotificationsStore().queue).toEqual([
      expect.objectContaining({ kind: 'error', title: 'Retiring data key version 1 failed', detail: 'Data key version 1 still seals 12 tokens.' })
    ])
  })

  it('announces without a toast an error the caller shows in place, and toasts the others', async () => {
    const { run } = useAction()
    const notifications = useNotificationsStore()
    const shownInPlace = (error: unknown) => error instanceof Error && error.message.startsWith('Bad')
    expect(await run('Saving the webhook', () => Promise.reject(problem(400, 'Bad url')), { shownInPlace })).toBe(false)
    expect(notifications.queue).toEqual([])
    expect(notifications.announcement).toMatchObject({ text: 'Saving the webhook failed. Bad url', politeness: 'assertive' })
    expect(await run('Saving the webhook', () => Promise.reject(problem(409, 'Conflict')), { shownInPlace })).toBe(false)
    expect(notifications.queue).toEqual([expect.objectContaining({ title: 'Saving the webhook failed', detail: 'Conflict' })])
  })

  it('says nothing about internals when the work throws something that is not a problem', async () => {
    const { run } = useAction()
    expect(await run('Loading tokens', () => Promise.reject(new Error('SQLITE_CONSTRAINT: 4242424242424242')))).toBe(false)
    expect(useNotificationsStore().queue[0]).toMatchObject({ title: 'Loading tokens failed', detail: 'Something went wrong. Try again.' })
  })

  it('is busy while any of its actions runs, whether it succeeds or fails', async () => {
    const { busy, run } = useAction()
    const first = deferred<void>()
    const second = deferred<void>()
    const one = run('One', () => first.promise)
    const two = run('Two', () => second.promise)
    expect(busy.value).toBe(true)
    first.resolve()
    await one
    expect(busy.value).toBe(true)
    second.reject(new Error('no'))
    await two
    expect(busy.value).toBe(false)
  })

  it('keeps the busy state of each instance apart', async () => {
    const saving = useAction()
    const loading = useAction()
    const work = deferred<void>()
    const pending = saving.run('Saving', () => work.promise)
    expect([saving.busy.value, loading.busy.value]).toEqual([true, false])
    work.resolve()
    await pending
  })
})
