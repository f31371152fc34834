import { EventEmitter } from 'node:events'
import { beforeEach, describe, expect, it, vi } from 'vitest'

class FakeApp extends EventEmitter {
  lock = true
  requestSingleInstanceLock = vi.fn(() => this.lock)
  quit = vi.fn(() => {
    const event = { defaultPrevented: false, preventDefault: () => (event.defaultPrevented = true) }
    this.emit('before-quit', event)
    return event
  })
}

const fake = { app: new FakeApp() }

vi.mock('electron', () => ({
  get app() {
    return fake.app
  }
}))

const { claimSingleInstance, installQuitHandler } = await import('../../src/main/electron/lifecycle')
const { silentLogger } = await import('../../src/main/infra/logger')

describe('claimSingleInstance', () => {
  beforeEach(() => {
    fake.app = new FakeApp()
  })

  it('quits when another instance already holds the lock', () => {
    fake.app.lock = false
    const focus = vi.fn()
    expect(claimSingleInstance(focus)).toBe(false)
    expect(fake.app.quit).toHaveBeenCalled()
  })

  it('focuses the existing window when a second instance starts', () => {
    const focus = vi.fn()
    expect(claimSingleInstance(focus)).toBe(true)
    fake.app.emit('second-instance')
    expect(focus).toHaveBeenCalledTimes(1)
  })
})

describe('installQuitHandler', () => {
  beforeEach(() => {
    fake.app = new FakeApp()
  })

  it('holds the quit until the service is stopped and the database closed, then quits for real', async () => {
    let finish!: () => void
    const shutdown = vi.fn(() => new Promise<void>((resolve) => (finish = resolve)))
    installQuitHandler(shutdown, silentLogger())

    const first = fake.app.quit()
    expect(first.defaultPrevented).toBe(true)
    expect(shutdown).toHaveBeenCalledTimes(1)
    // A second quit while stopping does not start a second shutdown.
    expect(fake.app.quit().defaultPrevented).toBe(true)
    expect(shutdown).toHaveBeenCalledTimes(1)

    finish()
    await vi.waitFor(() => expect(fake.app.quit).toHaveBeenCalledTimes(3))
    expect(fake.app.quit.mock.results[2].value.defaultPrevented).toBe(false)
  })

  it('still quits when the shutdown fails, and logs only the error name', async () => {
    const logger = silentLogger()
    const error = vi.spyOn(logger, 'error')
    installQuitHandler(() => Promise.reject(Object.assign(new Error('SQLITE_BUSY: values'), { code: 'SQLITE_BUSY' })), logger)
    fake.app.quit()
    await vi.waitFor(() => expect(fake.app.quit).toHaveBeenCalledTimes(2))
    expect(error).toHaveBeenCalledWith({ err: { name: 'Error', code: 'SQLITE_BUSY' } }, 'shutdown failed')
  })

  it('quits when the last window closes', () => {
    installQuitHandler(async () => undefined, silentLogger())
    fake.app.emit('window-all-closed')
    expect(fake.app.quit).toHaveBeenCalled()
  })
})
