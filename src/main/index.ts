/**
 * Electron bootstrap only: wire the desktop vault, IPC, window and lifecycle
 * together. Everything with logic lives in `desktop/` (Electron-free) and
 * `electron/` (the glue, unit-tested with Electron mocked).
 */
import { app, clipboard, session, type BrowserWindow } from 'electron'
import { DesktopVault } from './desktop/desktop-vault'
import { createDesktopHandlers } from './desktop/handlers'
import { SecretClipboard } from './desktop/secret-clipboard'
import { SettingsStore } from './desktop/settings'
import { TeamConnection } from './desktop/team-connection'
import { openDataDir } from './electron/data-dir'
import { watchIdleness } from './electron/idle-monitor'
import { registerIpcHandlers } from './electron/ipc'
import { createKeychainStore, createTeamCredentialStore } from './electron/keychain'
import { claimSingleInstance, installQuitHandler } from './electron/lifecycle'
import { desktopDataDir, devServerUrl, preloadPath, rendererDir } from './electron/paths'
import { registerAppScheme, serveRenderer } from './electron/protocol'
import { APP_ENTRY_URL, createMainWindow, installSessionPolicies } from './electron/window'
import { createLogger } from './infra/logger'

async function main(): Promise<void> {
  let window: BrowserWindow | undefined
  const focusWindow = () => {
    if (!window) return
    if (window.isMinimized()) window.restore()
    window.focus()
  }
  const logger = createLogger()
  registerAppScheme()
  const dataDir = desktopDataDir()
  // Nothing is written in a data folder that is not private to this user (the CLI's rule), not even the
  // single-instance lock Electron keeps there: it says why and exits.
  if (!openDataDir(dataDir, logger)) return
  if (!claimSingleInstance(focusWindow)) return

  await app.whenReady()
  const settings = new SettingsStore(dataDir)
  await settings.load()
  const secretClipboard = new SecretClipboard(clipboard)
  const desktop = new DesktopVault({
    dataDir,
    keyStore: await createKeychainStore(dataDir),
    settings,
    logger,
    version: app.getVersion(),
    onLock: () => secretClipboard.clearIfUnchanged()
  })
  const stopIdleWatch = watchIdleness(desktop, logger)
  installQuitHandler(async () => {
    stopIdleWatch()
    await secretClipboard.clearIfUnchanged()
    await desktop.shutdown()
  }, logger)

  const devServer = devServerUrl()
  if (!devServer) serveRenderer(rendererDir())
  installSessionPolicies(session.defaultSession, devServer)
  const team = new TeamConnection({ store: await createTeamCredentialStore(dataDir), logger })
  registerIpcHandlers({
    handlers: createDesktopHandlers(desktop, { clipboard: secretClipboard, team, logger }),
    mainFrame: () => window?.webContents.mainFrame,
    logger,
    devServerUrl: devServer
  })

  // Open an existing vault before the first paint; a failure is shown by the GUI's unlock screen.
  if ((await desktop.status()).state === 'locked') await desktop.unlock().catch(() => undefined)
  // Back onto the team vault the window was on when it last closed, if any.
  await team.restore(() => desktop.status())
  window = createMainWindow({ preload: preloadPath(), url: devServer ?? APP_ENTRY_URL })
  window.on('closed', () => (window = undefined))
}

void main()
