/**
 * Feeds the desktop vault's idle lock from Electron's powerMonitor: the
 * system's idle time once a second, and the moments the computer goes to
 * sleep or its screen locks (where the OS reports them).
 */
import { powerMonitor } from 'electron'
import type { PowerEvent } from '../desktop/idle-lock'
import type { Logger } from '../infra/logger'

export interface IdleLockTarget {
  reportIdle(idleSeconds: number): Promise<void>
  reportPowerEvent(event: PowerEvent): Promise<void>
}

const POWER_EVENTS: readonly PowerEvent[] = ['suspend', 'lock-screen']

/** Starts watching; returns a function that stops it (at quit). */
export function watchIdleness(target: IdleLockTarget, logger: Logger, everyMs = 1000): () => void {
  const report = (work: Promise<void>) =>
    work.catch((error: Error & { code?: string }) => logger.error({ err: { name: error.name, code: error.code } }, 'idle lock failed'))
  const timer = setInterval(() => void report(target.reportIdle(powerMonitor.getSystemIdleTime())), everyMs)
  timer.unref()
  const listeners = POWER_EVENTS.map((event) => [event, () => void report(target.reportPowerEvent(event))] as const)
  for (const [event, listener] of listeners) powerMonitor.on(event as 'suspend', listener)
  return () => {
    clearInterval(timer)
    for (const [event, listener] of listeners) powerMonitor.off(event as 'suspend', listener)
  }
}
