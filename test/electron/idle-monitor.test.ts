import { EventEmitter } from 'node:events'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

class FakePowerMonitor extends EventEmitter {
  idle = 0
  getSystemIdleTime = vi.fn(() => this.idle)
}

const fake = { powerMonitor: new FakePowerMonitor() }

vi.mock('electron', () => ({
  get powerMonitor() {
    return fake.powerMonitor
  }
}))

const { watchIdleness } = await import('../../src/main/electron/idle-monitor')
const { silentLogger } = await import('../../src/main/infra/logger')

describe('watchIdleness', () => {
  beforeEach(() => {
    fake.powerMonitor = new FakePowerMonitor()
    vi.useFakeTimers()
  })
  afterEach(() => vi.useRealTimers())

  it('reports the system idle time every second and the sleep and screen-lock events, until stopped', async () => {
    const target = { reportIdle: vi.fn(async () => undefined), reportPowerEvent: vi.fn(async () => undefined) }
    const stop = watchIdleness(target, silentLogger())
    fake.powerMonitor.idle = 42
    await vi.advanceTimersByTimeAsync(3000)
    expect(target.reportIdle.mock.calls).toEqual([[42], [42], [42]])

    fake.powerMonitor.emit('suspend')
    fake.powerMonitor.emit('lock-screen')
    expect(target.reportPowerEvent.mock.calls).toEqual([['suspend'], ['lock-screen']])

    stop()
    await vi.advanceTimersByTimeAsync(3000)
    fake.powerMonitor.emit('suspend')
    expect(target.reportIdle).toHaveBeenCalledTimes(3)
    expect(target.reportPowerEvent).toHaveBeenCalledTimes(2)
  })

  it('keeps watching when a report fails', async () => {
    const target = { reportIdle: vi.fn(async () => Promise.reject(new Error('vault busy'))), reportPowerEvent: vi.fn(async () => undefined) }
    const stop = watchIdleness(target, silentLogger())
    await vi.advanceTimersByTimeAsync(2000)
    expect(target.reportIdle).toHaveBeenCalledTimes(2)
    stop()
  })
})
