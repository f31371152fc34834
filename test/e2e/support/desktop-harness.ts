/**
 * The browser tests' stand-in for Electron: a small HTTP server that serves
 * the built renderer and forwards `POST /__ipc/<channel>` to the same desktop
 * handler table Electron's ipcMain uses, over a real vault in a temporary
 * folder (the vault's own REST service runs too, as in the app).
 */
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { extname, join, normalize } from 'node:path'
import { readySodium } from '../../../src/main/crypto/sodium'
import { DesktopVault } from '../../../src/main/desktop/desktop-vault'
import { dispatch } from '../../../src/main/desktop/dispatch'
import { createDesktopHandlers } from '../../../src/main/desktop/handlers'
import { keyFileStore } from '../../../src/main/desktop/key-store'
import { SettingsStore, SETTINGS_FILE } from '../../../src/main/desktop/settings'
import { silentLogger } from '../../../src/main/infra/logger'
import type { Clock } from '../../../src/main/app/service-context'
import { version as PACKAGE_VERSION } from '../../../package.json'
import { E2E_RENDERER_DIR } from '../global-setup'

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2'
}

export interface DesktopHarness {
  /** Where the renderer is served. */
  url: string
  dataDir: string
  desktop: DesktopVault
  /** The REST service of the open vault. */
  serviceUrl(): Promise<string>
  stop(): Promise<void>
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

async function readBody(request: import('node:http').IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export interface HarnessOptions {
  /** `open` (default): a new vault, created and unlocked; `none`: the GUI starts on its first-run screen. */
  vault?: 'open' | 'none'
  /**
   * An existing vault's data folder (with its master.key) to unlock instead
   * of creating one, e.g. a large seeded vault; it is left in place on stop.
   */
  dataDir?: string
  clock?: Clock
  tenantName?: string
}

/** Starts the harness over a new vault in a temporary folder, or over `options.dataDir`'s vault. */
export async function startDesktopHarness(options: HarnessOptions = {}): Promise<DesktopHarness> {
  await readySodium()
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'tessera-e2e-')))
  await writeFile(join(dataDir, SETTINGS_FILE), JSON.stringify({ port: await freePort() }))
  const settings = new SettingsStore(dataDir)
  await settings.load()
  const logger = silentLogger()
  const desktop = new DesktopVault({ dataDir, keyStore: keyFileStore(dataDir, {}), settings, logger, version: PACKAGE_VERSION, clock: options.clock })
  if (options.dataDir) await desktop.unlock()
  else if ((options.vault ?? 'open') === 'open') {
    await desktop.create({ tenantName: options.tenantName ?? 'E2E tenant', ownerEmail: 'owner@example.com', keyStorage: 'key-file' })
  }
  const handlers = createDesktopHandlers(desktop)

  const server: Server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname)
    if (request.method === 'POST' && path.startsWith('/__ipc/')) {
      let args: unknown
      try {
        args = JSON.parse((await readBody(request)) || '[]')
      } catch {
        args = undefined
      }
      const result = await dispatch(handlers, path.slice('/__ipc/'.length), Array.isArray(args) ? args : [args], logger)
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(result))
      return
    }
    const file = normalize(join(E2E_RENDERER_DIR, path === '/' ? 'index.html' : path))
    if (!file.startsWith(E2E_RENDERER_DIR)) {
      response.writeHead(403).end()
      return
    }
    try {
      const content = await readFile(file)
      response.writeHead(200, { 'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream' })
      response.end(content)
    } catch {
      response.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/`,
    dataDir,
    desktop,
    async serviceUrl() {
      const url = (await desktop.status()).service.url
      if (!url) throw new Error('the vault is not open')
      return url
    },
    async stop() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await desktop.shutdown()
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true })
    }
  }
}
