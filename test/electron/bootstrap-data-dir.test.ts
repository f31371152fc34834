/**
 * The desktop start-up (src/main/index.ts, Electron mocked) holds its data
 * folder to the CLI's rule before it opens anything there: a folder other
 * users may write, or that belongs to another user, is refused with an error
 * box saying why and how to fix it, and the app exits with code 8 (as the CLI
 * does) having created nothing in it; a private folder starts as before.
 */
import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'

const state = vi.hoisted(() => ({
  windows: [] as unknown[],
  errorBoxes: [] as { title: string; content: string }[],
  quits: 0,
  /** Codes of app.exit calls: an exit skips the graceful quit. */
  exits: [] as number[],
  /** Single-instance locks taken: Electron keeps the lock in the data folder. */
  locks: 0,
  /** Each start-up's app (a module reset may make a new one), to quit them all at the end. */
  apps: [] as { quit: () => void }[]
}))

vi.mock('electron', async () => {
  const { EventEmitter } = await import('node:events')
  class App extends EventEmitter {
    isPackaged = false
    constructor() {
      super()
      state.apps.push(this)
    }
    requestSingleInstanceLock = () => {
      state.locks++
      return true
    }
    whenReady = async () => undefined
    getVersion = () => '9.9.9'
    getPath = () => '/nonexistent'
    quit = () => {
      state.quits++
      const event = { preventDefault: () => undefined }
      this.emit('before-quit', event)
    }
    exit = (code = 0) => void state.exits.push(code)
  }
  const mainFrame = { processId: 1, routingId: 1, parent: null, url: 'app://tessera/index.html' }
  class BrowserWindow extends EventEmitter {
    webContents = { mainFrame, setWindowOpenHandler: vi.fn(), on: vi.fn() }
    show = vi.fn()
    loadURL = vi.fn(async () => undefined)
    constructor(options: unknown) {
      super()
      state.windows.push(options)
    }
  }
  const webRequest = { onHeadersReceived: vi.fn(), onBeforeRequest: vi.fn() }
  return {
    app: new App(),
    BrowserWindow,
    dialog: { showErrorBox: (title: string, content: string) => void state.errorBoxes.push({ title, content }) },
    nativeTheme: { shouldUseDarkColors: false },
    session: { defaultSession: { webRequest, setPermissionRequestHandler: vi.fn(), setPermissionCheckHandler: vi.fn() } },
    clipboard: { readText: vi.fn(async () => ''), writeText: vi.fn(async () => undefined), clear: vi.fn() },
    protocol: { registerSchemesAsPrivileged: vi.fn(), handle: vi.fn() },
    safeStorage: { isAsyncEncryptionAvailable: vi.fn(async () => false), getSelectedStorageBackend: () => 'basic_text' },
    ipcMain: { handle: vi.fn(), removeHandler: vi.fn() },
    powerMonitor: Object.assign(new EventEmitter(), { getSystemIdleTime: vi.fn(() => 0) })
  }
})

/** Starts the desktop app on `dataDir`, as `electron .` with TESSERA_DATA_DIR set, until it quits or opens its window. */
async function startDesktop(dataDir: string): Promise<void> {
  vi.stubEnv('TESSERA_DATA_DIR', dataDir)
  vi.resetModules()
  const ended = () => state.quits + state.exits.length + state.windows.length
  const before = ended()
  await import('../../src/main/index')
  await vi.waitFor(() => expect(ended()).toBeGreaterThan(before), { timeout: 10_000 })
  // Whatever start-up would still do after quitting has had its chance to show.
  await sleep(300)
}

describe.skipIf(process.platform === 'win32')('the desktop data folder at start-up', { timeout: 30_000 }, () => {
  let root: string

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-desktop-data-dir-'))
    vi.stubEnv('ELECTRON_RENDERER_URL', '')
    vi.stubEnv('TESSERA_LOG_LEVEL', 'silent')
  })
  beforeEach(() => {
    state.windows = []
    state.errorBoxes = []
    state.quits = 0
    state.exits = []
    state.locks = 0
  })
  afterAll(async () => {
    // Closes the vaults of the start-ups that opened a window.
    for (const app of new Set(state.apps)) app.quit()
    await sleep(300)
    vi.unstubAllEnvs()
    await rm(root, { recursive: true, force: true })
  })

  it('refuses a folder other users may write: it says why and how to fix it, exits with code 8 as the CLI does, and creates nothing there, not even the single-instance lock', async () => {
    const open = join(root, 'world-writable')
    await mkdir(open)
    await chmod(open, 0o777)

    await startDesktop(open)
    expect(state.errorBoxes).toHaveLength(1)
    const [box] = state.errorBoxes
    expect(box.title).toBe('Tessera cannot use its data folder')
    expect(box.content).toContain(`The data directory ${open} is writable by other users (mode 0777).`)
    expect(box.content).toContain(`To fix it, make it private to its owner: chmod 700 ${open}`)
    expect(state.exits).toEqual([8])
    expect(state.quits).toBe(0)
    expect(state.locks).toBe(0)
    expect(state.windows).toHaveLength(0)
    expect(await readdir(open)).toEqual([])
  })

  it.skipIf(process.getuid?.() !== 0)('refuses a folder that belongs to another user', async () => {
    const theirs = join(root, 'theirs')
    await mkdir(theirs, { mode: 0o700 })
    await chown(theirs, 65534, 65534)

    await startDesktop(theirs)
    expect(state.errorBoxes).toHaveLength(1)
    expect(state.errorBoxes[0].content).toContain(`The data directory ${theirs} belongs to another user (uid 65534).`)
    expect(state.exits).toEqual([8])
    expect(state.windows).toHaveLength(0)
    expect(await readdir(theirs)).toEqual([])
  })

  it('starts as before on a folder private to this user (0700), and creates a missing one 0700', async () => {
    const own = join(root, 'own')
    await mkdir(own, { mode: 0o700 })
    await startDesktop(own)
    expect(state.errorBoxes).toEqual([])
    expect(state.windows).toHaveLength(1)
    expect(state.quits).toBe(0)
    expect(state.exits).toEqual([])
    expect(state.locks).toBe(1)

    const missing = join(root, 'new', 'vault')
    await startDesktop(missing)
    expect(state.errorBoxes).toEqual([])
    expect(state.windows).toHaveLength(2)
    expect((await stat(missing)).mode & 0o777).toBe(0o700)
  })
})
