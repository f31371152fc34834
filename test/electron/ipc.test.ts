import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { IPC_CHANNELS } from '../../src/shared/ipc'

const handlers = new Map<string, (event: unknown, ...args: unknown[]) => Promise<any>>()

vi.mock('electron', () => ({
  ipcMain: {
    handle: vi.fn((channel: string, listener: any) => handlers.set(channel, listener)),
    removeHandler: vi.fn((channel: string) => handlers.delete(channel))
  },
  BrowserWindow: class {},
  nativeTheme: { shouldUseDarkColors: false }
}))

const { registerIpcHandlers, isTrustedSender } = await import('../../src/main/electron/ipc')
const { DesktopVault } = await import('../../src/main/desktop/desktop-vault')
const { createDesktopHandlers } = await import('../../src/main/desktop/handlers')
const { keyFileStore } = await import('../../src/main/desktop/key-store')
const { SettingsStore } = await import('../../src/main/desktop/settings')
const { silentLogger } = await import('../../src/main/infra/logger')

const APP_URL = 'app://tessera/index.html#/tokens'
const mainFrame = { processId: 4, routingId: 1, parent: null, url: APP_URL }

function eventFrom(frame: Partial<typeof mainFrame> | null) {
  return { senderFrame: frame === null ? null : { ...mainFrame, ...frame } }
}

describe('registerIpcHandlers', () => {
  let dataDir: string
  let dispose: () => void
  const logger = silentLogger()
  const warn = vi.spyOn(logger, 'warn')

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-ipc-'))
    const settings = new SettingsStore(dataDir)
    const desktop = new DesktopVault({ dataDir, keyStore: keyFileStore(dataDir, {}), settings, logger, version: '1.0.0' })
    dispose = registerIpcHandlers({ handlers: createDesktopHandlers(desktop), mainFrame: () => mainFrame as never, logger })
  })

  afterAll(async () => {
    dispose()
    await rm(dataDir, { recursive: true, force: true })
  })

  beforeEach(() => warn.mockClear())

  it('registers one handler per channel of the contract, all prefixed app:', () => {
    expect([...handlers.keys()].sort()).toEqual([...IPC_CHANNELS].sort())
    expect([...handlers.keys()].every((channel) => channel.startsWith('app:'))).toBe(true)
  })

  it('answers the main window with the handler result', async () => {
    const result = await handlers.get('app:vault.status')!(eventFrom({}))
    expect(result).toMatchObject({ ok: true, value: { state: 'setup', dataDir, keychainAvailable: false, version: '1.0.0' } })
  })

  it('refuses a sub-frame, another window, a foreign page and a missing frame with a 403 problem', async () => {
    for (const event of [
      eventFrom({ parent: {} as never }),
      eventFrom({ routingId: 2 }),
      eventFrom({ processId: 9 }),
      eventFrom({ url: 'https://evil.example.com/' }),
      eventFrom(null)
    ]) {
      const result = await handlers.get('app:vault.status')!(event)
      expect(result).toEqual({ ok: false, problem: expect.objectContaining({ status: 403, code: 'ipc_sender_refused' }) })
    }
    expect(warn).toHaveBeenCalledTimes(5)
  })

  it('validates payloads before anything runs: wrong types, missing and extra arguments are 400s naming the argument', async () => {
    const call = (channel: string, ...args: unknown[]) => handlers.get(channel)!(eventFrom({}), ...args)
    expect((await call('app:tokens.get', 42)).problem).toMatchObject({ status: 400, errors: { 'args[0]': [expect.any(String)] } })
    expect((await call('app:tokens.get')).problem).toMatchObject({ status: 400 })
    expect((await call('app:tokens.reveal', 'id', 'why', 'extra')).problem).toMatchObject({ status: 400 })
    expect((await call('app:tokens.list', { page: 'one' })).problem).toMatchObject({ status: 400, errors: { 'args[0].page': [expect.any(String)] } })
    expect((await call('app:tokens.list', { sql: 'drop' })).problem).toMatchObject({ status: 400, errors: { 'args[0].sql': ['is not a known field'] } })
    expect((await call('app:tokens.create', ['not', 'an', 'object'])).problem).toMatchObject({ status: 400 })
    expect((await call('app:vault.create', { tenantName: '', keyStorage: 'usb-stick' })).problem).toMatchObject({
      status: 400,
      errors: { 'args[0].tenantName': [expect.any(String)], 'args[0].keyStorage': [expect.any(String)] }
    })
  })

  it('answers a well-formed call on a locked vault with a 503 problem', async () => {
    const result = await handlers.get('app:tokens.list')!(eventFrom({}), {})
    expect(result).toEqual({ ok: false, problem: expect.objectContaining({ status: 503, code: 'vault_locked' }) })
  })

  it('removes every handler on dispose', () => {
    const before = handlers.size
    const disposeAgain = registerIpcHandlers({ handlers: {} as never, mainFrame: () => undefined, logger })
    disposeAgain()
    expect(before).toBe(IPC_CHANNELS.length)
    expect(handlers.size).toBe(0)
  })
})

describe('isTrustedSender', () => {
  it('trusts nothing while there is no main window', () => {
    expect(isTrustedSender(eventFrom({}) as never, undefined)).toBe(false)
  })

  it('trusts the main frame only while it shows the app origin, not a file:// page or another app:// host', () => {
    for (const url of ['file:///opt/Tessera/resources/app.asar/out/renderer/index.html', 'app://evil/index.html', 'app://tessera.evil/index.html']) {
      const frame = { ...mainFrame, url }
      expect(isTrustedSender({ senderFrame: frame } as never, frame as never), url).toBe(false)
    }
    expect(isTrustedSender({ senderFrame: mainFrame } as never, mainFrame as never)).toBe(true)
  })

  it('trusts the dev server page only when it is the configured one', () => {
    const devFrame = { ...mainFrame, url: 'http://localhost:5173/#/tokens' }
    expect(isTrustedSender({ senderFrame: devFrame } as never, devFrame as never, 'http://localhost:5173')).toBe(true)
    expect(isTrustedSender({ senderFrame: devFrame } as never, devFrame as never)).toBe(false)
  })
})
