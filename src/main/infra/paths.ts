import { homedir } from 'node:os'
import { join } from 'node:path'

/** The product name; also the folder name Electron gives `app.getPath('userData')`. */
export const PRODUCT_NAME = 'Tessera'

/**
 * The OS app-data folder that Electron's `userData` resolves to, so the CLI and
 * the desktop app share one vault by default.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), PRODUCT_NAME)
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', PRODUCT_NAME)
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), PRODUCT_NAME)
}
