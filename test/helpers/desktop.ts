/** A desktop vault over a fresh data folder, as the IPC handler tests drive it (no Electron). */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readySodium } from '../../src/main/crypto/sodium'
import { DesktopVault } from '../../src/main/desktop/desktop-vault'
import { keyFileStore } from '../../src/main/desktop/key-store'
import { SETTINGS_FILE, SettingsStore } from '../../src/main/desktop/settings'
import type { Logger } from '../../src/main/infra/logger'
import type { TestClock } from './clock'

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

export interface TestDesktop {
  dataDir: string
  desktop: DesktopVault
  /** Shuts the desktop vault down and removes its folder. */
  dispose(): Promise<void>
}

/** A desktop vault (no vault created yet) keeping its master key in a key file, its service on a free port. */
export async function startTestDesktop(options: { logger: Logger; clock: TestClock; version: string }): Promise<TestDesktop> {
  await readySodium()
  const dataDir = await mkdtemp(join(tmpdir(), 'tessera-desktop-'))
  await writeFile(join(dataDir, SETTINGS_FILE), JSON.stringify({ port: await freePort() }))
  const settings = new SettingsStore(dataDir)
  await settings.load()
  const desktop = new DesktopVault({ dataDir, keyStore: keyFileStore(dataDir, {}), settings, ...options })
  return {
    dataDir,
    desktop,
    async dispose() {
      await desktop.shutdown()
      await rm(dataDir, { recursive: true, force: true })
    }
  }
}
