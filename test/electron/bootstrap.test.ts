import { EventEmitter } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { IPC_CHANNELS } from '../../src/shared/ipc'

const state = vi.hoisted(() => ({
  handlers: new Map<string, (event: unknown, ...args: unknown[]) => Promise<any>>(),
  windows: [] as { options: any; loaded?: string; webContents: any }[],
  /** What happened, in order: the app:// scheme must be privileged before the app is ready. */
  steps: [] as string[],
  protocols: new Map<string, (request: Request) => Promise<Response>>(),
  /** What the system clipboard holds. */
  clipboardText: ''
}))

vi.mock('electron', async () => {
  const { EventEmitter } = await import('node:events')
  class App extends EventEmitter {
    isPackaged = false
    requestSingleInstanceLock = vi.fn(() => true)
    whenReady = vi.fn(async () => void state.steps.push('ready'))
    getVersion = () => '9.9.9'
    getPath = () => '/nonexistent'
    quit = vi.fn(() => {
      const event = { prevented: false, preventDefault: () => (event.prevented = true) }
      this.emit('before-quit', event)
    })
  }
  const mainFrame = { processId: 1, routingId: 1, parent: null, url: 'app://tessera/index.html' }
  class BrowserWindow extends EventEmitter {
    webContents = { mainFrame, setWindowOpenHandler: vi.fn(), on: vi.fn() }
    show = vi.fn()
    loadURL = vi.fn(async (url: string) => (state.windows.at(-1)!.loaded = url))
    constructor(options: unknown) {
      super()
      state.windows.push({ options, webContents: this.webContents })
    }
  }
  const webRequest = { onHeadersReceived: vi.fn(), onBeforeRequest: vi.fn() }
  return {
    app: new App(),
    BrowserWindow,
    nativeTheme: { shouldUseDarkColors: false },
    session: { defaultSession: { webRequest, setPermissionRequestHandler: vi.fn(), setPermissionCheckHandler: vi.fn() } },
    clipboard: {
      readText: vi.fn(async () => state.clipboardText),
      writeText: vi.fn(async (text: string) => void (state.clipboardText = text)),
      clear: vi.fn(() => void (state.clipboardText = ''))
    },
    protocol: {
      registerSchemesAsPrivileged: vi.fn(() => void state.steps.push('privileged')),
      handle: vi.fn((scheme: string, handler: (request: Request) => Promise<Response>) => state.protocols.set(scheme, handler))
    },
    safeStorage: { isAsyncEncryptionAvailable: vi.fn(async () => false), getSelectedStorageBackend: () => 'basic_text' },
    ipcMain: { handle: vi.fn((channel: string, listener: any) => state.handlers.set(channel, listener)), removeHandler: vi.fn() },
    powerMonitor: Object.assign(new EventEmitter(), { getSystemIdleTime: vi.fn(() => 0) })
  }
})

describe('src/main/index.ts (bootstrap)', () => {
  let dataDir: string
  let electron: typeof import('electron')
  /** The REST service's address once the vault is created. */
  let url: string
  const call = (channel: string, ...args: unknown[]) => state.handlers.get(channel)!({ senderFrame: state.windows[0].webContents.mainFrame }, ...args)

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-bootstrap-'))
    vi.stubEnv('TESSERA_DATA_DIR', dataDir)
    vi.stubEnv('ELECTRON_RENDERER_URL', '')
    vi.stubEnv('TESSERA_LOG_LEVEL', 'silent')
    electron = await import('electron')
    await import('../../src/main/index')
    await vi.waitFor(() => expect(state.windows).toHaveLength(1), { timeout: 10_000 })
  })

  afterAll(async () => {
    vi.unstubAllEnvs()
    await rm(dataDir, { recursive: true, force: true })
  })

  it('takes the single-instance lock, registers every IPC channel and opens one window with the built preload and page', () => {
    expect(electron.app.requestSingleInstanceLock).toHaveBeenCalled()
    expect([...state.handlers.keys()].sort()).toEqual([...IPC_CHANNELS].sort())
    const [window] = state.windows
    expect(window.options.webPreferences.preload).toMatch(/preload[/\\]index\.cjs$/)
    expect(window.loaded).toBe('app://tessera/index.html')
    expect(electron.session.defaultSession.webRequest.onHeadersReceived).toHaveBeenCalled()
  })

  it('serves the page on app://, a scheme made privileged before the app was ready, never from file://', () => {
    expect(state.steps.slice(0, 2)).toEqual(['privileged', 'ready'])
    expect([...state.protocols.keys()]).toEqual(['app'])
    expect(state.windows.every((window) => !window.loaded?.startsWith('file:'))).toBe(true)
  })

  it('watches the system for idleness, sleep and screen locks (the idle lock)', () => {
    const powerMonitor = electron.powerMonitor as unknown as import('node:events').EventEmitter
    expect(powerMonitor.listenerCount('suspend')).toBe(1)
    expect(powerMonitor.listenerCount('lock-screen')).toBe(1)
  })

  it('answers the window over IPC: first run in the data folder, no keychain here', async () => {
    const event = { senderFrame: state.windows[0].webContents.mainFrame }
    const result = await state.handlers.get('app:vault.status')!(event)
    expect(result).toMatchObject({ ok: true, value: { state: 'setup', dataDir, keychainAvailable: false, version: '9.9.9' } })
  })

  it('creates the vault from the window', async () => {
    const created = await call('app:vault.create', { tenantName: 'Acme', keyStorage: 'key-file' })
    url = created.value.status.service.url as string
    expect((await fetch(`${url}/health`)).status).toBe(200)
  })

  it('takes a copied secret off the clipboard when the vault locks, by the Lock button or as the screen locks', async () => {
    expect(await call('app:clipboard.copySecret', 'key_private_locked-by-button')).toMatchObject({ ok: true })
    expect(state.clipboardText).toBe('key_private_locked-by-button')
    expect(await call('app:vault.lock')).toMatchObject({ ok: true, value: { state: 'locked' } })
    expect(state.clipboardText).toBe('')

    expect(await call('app:vault.unlock')).toMatchObject({ ok: true, value: { state: 'unlocked' } })
    await call('app:clipboard.copySecret', 'key_private_locked-with-screen')
    ;(electron.powerMonitor as unknown as EventEmitter).emit('lock-screen')
    await vi.waitFor(async () => expect((await call('app:vault.status')).value.state).toBe('locked'))
    expect(state.clipboardText).toBe('')

    // Something copied since is the user's, and stays.
    expect(await call('app:vault.unlock')).toMatchObject({ ok: true, value: { state: 'unlocked' } })
    await call('app:clipboard.copySecret', 'key_private_replaced')
    state.clipboardText = 'a note of the user'
    await call('app:vault.lock')
    expect(state.clipboardText).toBe('a note of the user')
    expect(await call('app:vault.unlock')).toMatchObject({ ok: true, value: { state: 'unlocked' } })
  })

  it('stops the service on quit before exiting', async () => {
    expect((await fetch(`${url}/health`)).status).toBe(200)
    const app = electron.app as unknown as EventEmitter & { quit: (() => void) & { mock: { calls: unknown[] } } }
    app.quit()
    await vi.waitFor(() => expect(app.quit).toHaveBeenCalledTimes(2))
    await expect(fetch(`${url}/health`)).rejects.toThrow()
  })
})
