import type { TesseraBridge } from '../shared/ipc'

declare global {
  interface Window {
    /** The typed IPC contract exposed by the preload; use it only through `src/renderer/src/api`. */
    tessera: TesseraBridge
  }
}

export {}
