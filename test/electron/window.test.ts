import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { beforeEach, describe, expect, it, vi } from 'vitest'

const created: { options: any; webContents: any; loaded?: string; once: Record<string, () => void> }[] = []
const app = vi.hoisted(() => ({ isPackaged: false }))

vi.mock('electron', () => {
  class BrowserWindow {
    webContents = { setWindowOpenHandler: vi.fn(), on: vi.fn() }
    once = vi.fn((event: string, listener: () => void) => (created.at(-1)!.once[event] = listener))
    show = vi.fn()
    loadURL = vi.fn(async (url: string) => (created.at(-1)!.loaded = url))
    constructor(options: unknown) {
      created.push({ options, webContents: this.webContents, once: {} })
    }
  }
  return { app, BrowserWindow, nativeTheme: { shouldUseDarkColors: false } }
})

const { APP_ENTRY_URL, CONTENT_SECURITY_POLICY, WINDOW_SIZE, createMainWindow, installSessionPolicies, isAppUrl, lockDownContents } = await import(
  '../../src/main/electron/window'
)

function fakeSession() {
  const hooks: Record<string, any> = {}
  return {
    hooks,
    webRequest: {
      onHeadersReceived: vi.fn((listener) => (hooks.headers = listener)),
      onBeforeRequest: vi.fn((listener) => (hooks.request = listener))
    },
    setPermissionRequestHandler: vi.fn((listener) => (hooks.permissionRequest = listener)),
    setPermissionCheckHandler: vi.fn((listener) => (hooks.permissionCheck = listener))
  }
}

describe('createMainWindow', () => {
  beforeEach(() => {
    created.length = 0
  })

  it('isolates the renderer: context isolation, sandbox, no Node, web security on', () => {
    createMainWindow({ preload: '/app/out/preload/index.cjs', url: 'app://tessera/index.html' })
    const { webPreferences } = created[0].options
    expect(webPreferences).toMatchObject({
      preload: '/app/out/preload/index.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false
    })
  })

  it('has developer tools only when not packaged', () => {
    createMainWindow({ preload: 'p', url: APP_ENTRY_URL })
    app.isPackaged = true
    try {
      createMainWindow({ preload: 'p', url: APP_ENTRY_URL })
    } finally {
      app.isPackaged = false
    }
    expect(created.map((window) => window.options.webPreferences.devTools)).toEqual([true, false])
  })

  it('opens at a sensible default size with a minimum, hidden until ready', () => {
    createMainWindow({ preload: 'p', url: 'app://tessera/index.html' })
    const { options } = created[0]
    expect(options).toMatchObject({ width: 1280, height: 820, minWidth: 960, minHeight: 600, show: false })
    expect(WINDOW_SIZE.minWidth).toBeLessThan(WINDOW_SIZE.width)
    expect(created[0].once['ready-to-show']).toBeTypeOf('function')
  })

  it('loads the app origin, or the dev server URL under electron-vite dev', () => {
    createMainWindow({ preload: 'p', url: APP_ENTRY_URL })
    createMainWindow({ preload: 'p', url: 'http://localhost:5173' })
    expect(created.map((window) => window.loaded)).toEqual(['app://tessera/index.html', 'http://localhost:5173'])
  })

  it('blocks new windows, navigation, redirects and webviews', () => {
    createMainWindow({ preload: 'p', url: 'app://tessera/index.html' })
    const contents = created[0].webContents
    expect(contents.setWindowOpenHandler.mock.calls[0][0]({ url: 'https://example.com' })).toEqual({ action: 'deny' })
    const events = Object.fromEntries(contents.on.mock.calls.map(([name, listener]: [string, any]) => [name, listener]))
    for (const name of ['will-navigate', 'will-redirect', 'will-attach-webview']) {
      const event = { preventDefault: vi.fn() }
      events[name](event)
      expect(event.preventDefault).toHaveBeenCalled()
    }
  })
})

describe('installSessionPolicies', () => {
  it('adds the Content-Security-Policy header to every response', () => {
    const session = fakeSession()
    installSessionPolicies(session as never)
    const callback = vi.fn()
    session.hooks.headers({ responseHeaders: { 'Content-Type': ['text/html'] } }, callback)
    expect(callback).toHaveBeenCalledWith({ responseHeaders: { 'Content-Type': ['text/html'], 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } })
  })

  it('has a strict policy: only its own scripts, no remote connections, no objects or frames', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'")
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'")
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline|https?:/)
    expect(CONTENT_SECURITY_POLICY).toContain("object-src 'none'")
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'")
  })

  it('uses the same policy as the <meta> of index.html (minus frame-ancestors, which a meta cannot set)', () => {
    const html = readFileSync(resolve(__dirname, '../../src/renderer/index.html'), 'utf8')
    const meta = html.match(/http-equiv="Content-Security-Policy"\s+content="([^"]+)"/)![1]
    expect(meta).toBe(CONTENT_SECURITY_POLICY.replace("; frame-ancestors 'none'", ''))
  })

  it('cancels requests for remote content and for local files outside the app origin', () => {
    const session = fakeSession()
    installSessionPolicies(session as never)
    const decide = (url: string) => {
      const callback = vi.fn()
      session.hooks.request({ url }, callback)
      return callback.mock.calls[0][0].cancel
    }
    expect(decide('app://tessera/assets/index.js')).toBe(false)
    expect(decide('file:///app/out/renderer/assets/index.js')).toBe(true)
    expect(decide('file:///etc/passwd')).toBe(true)
    expect(decide('app://other/index.js')).toBe(true)
    expect(decide('https://cdn.example.com/lib.js')).toBe(true)
    expect(decide('http://127.0.0.1:4390/tokens')).toBe(true)
  })

  it('allows the dev server only when running under electron-vite dev', () => {
    expect(isAppUrl('http://localhost:5173/src/main.ts', 'http://localhost:5173')).toBe(true)
    expect(isAppUrl('ws://localhost:5173/', 'http://localhost:5173')).toBe(true)
    expect(isAppUrl('http://localhost:5174/', 'http://localhost:5173')).toBe(false)
    expect(isAppUrl('http://localhost:5173/')).toBe(false)
  })

  it('denies every permission except writing the clipboard', () => {
    const session = fakeSession()
    installSessionPolicies(session as never)
    const ask = (permission: string) => {
      const callback = vi.fn()
      session.hooks.permissionRequest({}, permission, callback)
      return callback.mock.calls[0][0]
    }
    expect(ask('camera')).toBe(false)
    expect(ask('notifications')).toBe(false)
    expect(ask('clipboard-sanitized-write')).toBe(true)
    expect(session.hooks.permissionCheck({}, 'geolocation')).toBe(false)
  })
})

describe('lockDownContents', () => {
  it('can be applied to any web contents', () => {
    const contents = { setWindowOpenHandler: vi.fn(), on: vi.fn() }
    lockDownContents(contents as never)
    expect(contents.on.mock.calls.map(([name]) => name)).toEqual(['will-navigate', 'will-redirect', 'will-attach-webview'])
  })
})
