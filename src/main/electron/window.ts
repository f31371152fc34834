/**
 * The main window and the web security around it: an isolated,
 * sandboxed renderer without Node, a strict Content-Security-Policy (as a
 * response header here and as a <meta> in index.html), no remote content,
 * no navigation, no new windows, no permissions beyond writing the clipboard.
 * The built pages come from the app's own origin, `app://tessera` (see
 * protocol.ts), never from file://.
 */
import { app, BrowserWindow, nativeTheme, type Session, type WebContents } from 'electron'

/** The privileged custom scheme and origin the renderer's pages are served from. */
export const APP_SCHEME = 'app'
export const APP_HOST = 'tessera'
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`
/** What the window loads outside `electron-vite dev`. */
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`

/** Same policy as the <meta> in src/renderer/index.html; naive-ui injects <style> elements, hence inline styles. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "frame-ancestors 'none'"
].join('; ')

export const WINDOW_SIZE = { width: 1280, height: 820, minWidth: 960, minHeight: 600 }

/** Permissions the renderer may use: only the copy buttons need one. */
const ALLOWED_PERMISSIONS = new Set(['clipboard-sanitized-write'])

/** Whether a request stays inside the app: its own origin, or the dev server under `electron-vite dev`. */
export function isAppUrl(url: string, devServerUrl?: string): boolean {
  if (url.startsWith(`${APP_ORIGIN}/`) || /^(devtools|data|blob):/.test(url)) return true
  if (!devServerUrl) return false
  try {
    const target = new URL(url)
    return target.host === new URL(devServerUrl).host && (target.protocol === 'http:' || target.protocol === 'ws:')
  } catch {
    return false
  }
}

/** Session-wide rules: CSP header on every response, remote requests cancelled, permissions denied. */
export function installSessionPolicies(session: Session, devServerUrl?: string): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } })
  })
  session.webRequest.onBeforeRequest((details, callback) => {
    callback({ cancel: !isAppUrl(details.url, devServerUrl) })
  })
  session.setPermissionRequestHandler((_contents, permission, callback) => callback(ALLOWED_PERMISSIONS.has(permission)))
  session.setPermissionCheckHandler((_contents, permission) => ALLOWED_PERMISSIONS.has(permission))
}

/** No navigation away from the app, no new windows, no <webview>. */
export function lockDownContents(contents: WebContents): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }))
  contents.on('will-navigate', (event) => event.preventDefault())
  contents.on('will-redirect', (event) => event.preventDefault())
  contents.on('will-attach-webview', (event) => event.preventDefault())
}

export interface MainWindowOptions {
  preload: string
  /** `APP_ENTRY_URL`, or the dev server's URL under `electron-vite dev`. */
  url: string
}

export function createMainWindow(options: MainWindowOptions): BrowserWindow {
  const window = new BrowserWindow({
    ...WINDOW_SIZE,
    title: 'Tessera',
    show: false,
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#18181c' : '#ffffff',
    autoHideMenuBar: true,
    webPreferences: {
      preload: options.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      // A packaged app has no console into which a user could be talked into pasting code that drives the IPC bridge.
      devTools: !app.isPackaged
    }
  })
  lockDownContents(window.webContents)
  window.once('ready-to-show', () => window.show())
  void window.loadURL(options.url)
  return window
}
