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

/** What the window loads: the dev server under `electron-vite dev`, else the built file. */
export function rendererEntry(env: NodeJS.ProcessEnv = process.env): { url: string } | { file: string } {
  if (!app.isPackaged && env.ELECTRON_RENDERER_URL) return { url: env.ELECTRON_RENDERER_URL }
  return { file: join(__dirname, '../renderer/index.html') }
}
