/**
 * Exposes the typed contract as `window.tessera` and nothing else: one
 * function per channel of `IPC_CHANNELS`, each a plain `ipcRenderer.invoke`.
 * The renderer never sees `ipcRenderer` itself.
 */
import { contextBridge, ipcRenderer } from 'electron'
import { IPC_METHODS, channelOf, type Namespace, type TesseraBridge } from '../shared/ipc'

/** Builds the bridge object from the contract; exported for tests. */
export function buildBridge(invoke: (channel: string, ...args: unknown[]) => Promise<unknown>): TesseraBridge {
  const bridge: Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>> = {}
  for (const namespace of Object.keys(IPC_METHODS) as Namespace[]) {
    const methods: Record<string, (...args: unknown[]) => Promise<unknown>> = {}
    for (const method of IPC_METHODS[namespace]) {
      const channel = channelOf(namespace, method)
      methods[method] = (...args: unknown[]) => invoke(channel, ...args)
    }
    bridge[namespace] = methods
  }
  return bridge as unknown as TesseraBridge
}

contextBridge.exposeInMainWorld(
  'tessera',
  buildBridge((channel, ...args) => ipcRenderer.invoke(channel, ...args))
)
