/**
 * Where the desktop app finds its data and its own files. The data folder is
 * the one the CLI uses by default (`TESSERA_DATA_DIR`, else Electron's
 * `userData`, which is the same OS app-data folder), so both share one vault.
 */
import { join } from 'node:path'
import { app } from 'electron'

export function desktopDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.TESSERA_DATA_DIR ?? app.getPath('userData')
}

/** The built preload (CommonJS, next to the main bundle in `out/`). */
export function preloadPath(): string {
  return join(__dirname, '../preload/index.cjs')
}

/** The dev server's URL under `electron-vite dev` (never in a packaged app); undefined otherwise. */
export function devServerUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return !app.isPackaged && env.ELECTRON_RENDERER_URL ? env.ELECTRON_RENDERER_URL : undefined
}

/** The built renderer (next to the main bundle in `out/`), served on app://. */
export function rendererDir(): string {
  return join(__dirname, '../renderer')
}
