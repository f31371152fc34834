/**
 * Process lifecycle: one instance per user (a second launch focuses the first
 * window instead of opening the vault twice), and a graceful quit that stops
 * the REST service and closes the database before the process exits.
 */
import { app } from 'electron'
import type { Logger } from '../infra/logger'

/** Takes the single-instance lock; when another instance holds it, quits and returns false. */
export function claimSingleInstance(focusExisting: () => void): boolean {
  if (!app.requestSingleInstanceLock()) {
    app.quit()
    return false
  }
  app.on('second-instance', focusExisting)
  return true
}

/**
 * Holds the quit until `shutdown` has finished (service stopped, database
 * closed), then quits for real. Closing the last window or a SIGTERM/SIGINT
 * takes the same path.
 */
export function installQuitHandler(shutdown: () => Promise<void>, logger: Logger): void {
  let state: 'running' | 'stopping' | 'stopped' = 'running'
  app.on('before-quit', (event) => {
    if (state === 'stopped') return
    event.preventDefault()
    if (state === 'stopping') return
    state = 'stopping'
    shutdown()
      .catch((error: Error & { code?: string }) => logger.error({ err: { name: error.name, code: error.code } }, 'shutdown failed'))
      .finally(() => {
        state = 'stopped'
        app.quit()
      })
  })
  app.on('window-all-closed', () => app.quit())
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => app.quit())
}
