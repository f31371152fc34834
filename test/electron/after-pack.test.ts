import { createRequire } from 'node:module'
import { join } from 'node:path'
import { FuseV1Options, FuseVersion } from '@electron/fuses'
import { describe, expect, it, vi } from 'vitest'

const require = createRequire(import.meta.url)
const ROOT = join(__dirname, '..', '..')
const { afterPack, fuseConfig } = require(join(ROOT, 'build/after-pack.cjs')) as {
  afterPack: (context: unknown) => Promise<void>
  fuseConfig: (platform: string) => Record<string | number, unknown>
}

describe('packaging: the afterPack hook', () => {
  it('is the hook electron-builder runs', async () => {
    const { readFile } = await import('node:fs/promises')
    expect(await readFile(join(ROOT, 'build/electron-builder.yml'), 'utf8')).toMatch(/^afterPack: \.\/build\/after-pack\.cjs$/m)
  })

  it('flips the fuses of the packaged binary through electron-builder, for the platform packaged', async () => {
    const addElectronFuses = vi.fn(async () => undefined)
    const context = { electronPlatformName: 'linux', appOutDir: '/tmp/linux-unpacked', packager: { addElectronFuses } }
    await afterPack(context)
    expect(addElectronFuses).toHaveBeenCalledWith(context, fuseConfig('linux'))
  })

  it('turns off RunAsNode, NODE_OPTIONS and --inspect; loads only an integrity-checked app.asar; no file:// privileges', () => {
    const config = fuseConfig('win32')
    expect(config).toEqual({
      version: FuseVersion.V1,
      resetAdHocDarwinSignature: false,
      [FuseV1Options.RunAsNode]: false,
      [FuseV1Options.EnableCookieEncryption]: true,
      [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
      [FuseV1Options.EnableNodeCliInspectArguments]: false,
      [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
      [FuseV1Options.OnlyLoadAppFromAsar]: true,
      [FuseV1Options.LoadBrowserProcessSpecificV8Snapshot]: false,
      [FuseV1Options.GrantFileProtocolExtraPrivileges]: false
    })
  })

  it('sets every fuse this version of @electron/fuses knows, so none is left at its default', () => {
    const known = Object.values(FuseV1Options).filter((value) => typeof value === 'number')
    expect(Object.keys(fuseConfig('linux')).filter((key) => /^\d+$/.test(key)).map(Number).sort((a, b) => a - b)).toEqual(known.sort((a, b) => a - b))
  })

  it('redoes the ad-hoc signature on macOS only', () => {
    expect(fuseConfig('darwin').resetAdHocDarwinSignature).toBe(true)
    expect(fuseConfig('mas').resetAdHocDarwinSignature).toBe(true)
    expect(fuseConfig('linux').resetAdHocDarwinSignature).toBe(false)
  })
})
