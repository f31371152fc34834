/**
 * Registers every channel of the IPC contract with `ipcMain.handle`. Before a
 * payload reaches its handler (which validates its shape) the call must come
 * from the main window's top frame showing our own page, on a channel with the
 * contract's prefix, as VS Code's validatedIpcMain checks; anything else is
 * refused with a 403 problem and a warning in the log.
 */
import { ipcMain, type IpcMainInvokeEvent, type WebFrameMain } from 'electron'
import { CHANNEL_PREFIX, IPC_CHANNELS, type IpcResult } from '../../shared/ipc'
import type { Logger } from '../infra/logger'
import { problemOfCode } from '../app/problem'
import { dispatch } from '../desktop/dispatch'
import type { DesktopHandlers } from '../desktop/handlers'
import { isAppUrl } from './window'

export interface IpcOptions {
  handlers: DesktopHandlers
  /** The main window's top frame, or undefined while there is no window. */
  mainFrame(): WebFrameMain | undefined
  logger: Logger
  devServerUrl?: string
}

/** Whether `event` was sent by the main window's top frame showing the app. */
export function isTrustedSender(event: IpcMainInvokeEvent, mainFrame: WebFrameMain | undefined, devServerUrl?: string): boolean {
  const frame = event.senderFrame
  if (!frame || !mainFrame || frame.parent !== null) return false
  if (frame.processId !== mainFrame.processId || frame.routingId !== mainFrame.routingId) return false
  return isAppUrl(frame.url, devServerUrl)
}

const refused = (): IpcResult<never> => ({ ok: false, problem: problemOfCode('ipc_sender_refused') })

/** Registers the handlers; returns a function that removes them again. */
export function registerIpcHandlers(options: IpcOptions): () => void {
  for (const channel of IPC_CHANNELS) {
    ipcMain.handle(channel, async (event, ...args: unknown[]) => {
      if (!channel.startsWith(CHANNEL_PREFIX) || !isTrustedSender(event, options.mainFrame(), options.devServerUrl)) {
        options.logger.warn({ channel, url: event.senderFrame?.url }, 'IPC call refused')
        return refused()
      }
      return dispatch(options.handlers, channel, args, options.logger)
    })
  }
  return () => {
    for (const channel of IPC_CHANNELS) ipcMain.removeHandler(channel)
  }
}
