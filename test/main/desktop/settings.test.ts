import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../../src/main/crypto/keys'
import { readySodium } from '../../../src/main/crypto/sodium'
import { sealJson } from '../../../src/main/crypto/aead'
import { DEFAULT_PORT, SETTINGS_FILE, SettingsStore, type SettingsSecrets } from '../../../src/main/desktop/settings'
import { SMTP_PASSWORD_SETTING } from '../../../src/main/services/sealed-settings.service'
import { ValidationError } from '../../../src/main/services/errors'

describe('SettingsStore', () => {
  let dataDir: string

  beforeEach(async () => {
    await readySodium()
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-settings-'))
  })

  afterEach(() => rm(dataDir, { recursive: true, force: true }))

  it('defaults to port 4390 without a file, and with a broken one', async () => {
    const store = new SettingsStore(dataDir)
    await store.load()
    expect(store.view()).toEqual({ port: DEFAULT_PORT })
    await writeFile(join(dataDir, SETTINGS_FILE), '{not json')
    await store.load()
    expect(store.port).toBe(4390)
  })

  /** The vault's sealed settings, as a map. */
  function fakeVault() {
    const stored = new Map<string, string>()
    const secrets: SettingsSecrets = {
      put: async (name, value) => {
        if (value === null) stored.delete(name)
        else stored.set(name, value)
      }
    }
    return { stored, secrets }
  }

  it('puts the SMTP password into the vault, never into the file, and shows only whether one is set', async () => {
    const { stored, secrets } = fakeVault()
    const store = new SettingsStore(dataDir)
    const view = await store.update({ smtp: { host: 'smtp.example.com', port: 587, secure: false, user: 'vault', password: 'hunter2', from: 'vault@example.com' } }, secrets)
    expect(view.smtp).toEqual({ host: 'smtp.example.com', port: 587, secure: false, user: 'vault', from: 'vault@example.com', hasPassword: true })
    expect(stored.get(SMTP_PASSWORD_SETTING)).toBe('hunter2')
    const file = await readFile(join(dataDir, SETTINGS_FILE), 'utf8')
    expect(file).not.toContain('hunter2')
    expect((await stat(join(dataDir, SETTINGS_FILE))).mode & 0o777).toBe(0o600)

    const reloaded = new SettingsStore(dataDir)
    await reloaded.load()
    expect(reloaded.view().smtp?.hasPassword).toBe(true)
    expect(reloaded.mailConfig(stored.get(SMTP_PASSWORD_SETTING))).toMatchObject({ host: 'smtp.example.com', password: 'hunter2' })
  })

  it('keeps the stored password when a change says hasPassword without a new one, and removes it with SMTP', async () => {
    const { stored, secrets } = fakeVault()
    const store = new SettingsStore(dataDir)
    const smtp = { host: 'smtp.example.com', port: 465, secure: true, from: 'vault@example.com' }
    await store.update({ smtp: { ...smtp, password: 'hunter2' } }, secrets)
    await store.update({ smtp: { ...smtp, port: 2465, hasPassword: true } }, secrets)
    expect(store.mailConfig(stored.get(SMTP_PASSWORD_SETTING))).toMatchObject({ port: 2465, password: 'hunter2' })
    await store.update({ smtp: { ...smtp, hasPassword: false } }, secrets)
    expect(stored.has(SMTP_PASSWORD_SETTING)).toBe(false)
    await store.update({ smtp: { ...smtp, password: 'again' } }, secrets)
    await store.update({ smtp: null }, secrets)
    expect(store.view().smtp).toBeUndefined()
    expect(stored.size).toBe(0)
  })

  it('moves a password sealed under the master key by an earlier version into the vault', async () => {
    const key = generateMasterKey()
    const sealedPassword = Buffer.from(sealJson(key, 'hunter2', 'tessera:desktop:smtp-password')).toString('base64')
    await writeFile(join(dataDir, SETTINGS_FILE), JSON.stringify({ port: 4390, smtp: { host: 'smtp.example.com', port: 587, secure: false, from: 'a@b.c', sealedPassword } }))
    const store = new SettingsStore(dataDir)
    await store.load()
    expect(store.view().smtp?.hasPassword).toBe(true)
    expect(store.legacyPassword(generateMasterKey())).toBeUndefined()
    expect(store.mailConfig(store.legacyPassword(key))).toMatchObject({ password: 'hunter2' })

    const { stored, secrets } = fakeVault()
    await store.migrateLegacyPassword(key, secrets)
    expect(stored.get(SMTP_PASSWORD_SETTING)).toBe('hunter2')
    const file = await readFile(join(dataDir, SETTINGS_FILE), 'utf8')
    expect(file).not.toContain(sealedPassword)
    expect(JSON.parse(file).smtp.hasPassword).toBe(true)
  })

  it('rejects bad values and unknown fields, naming each', async () => {
    const store = new SettingsStore(dataDir)
    await expect(store.update({ port: 70000, publicBaseUrl: 'ftp://x', colour: 'red' }, undefined)).rejects.toMatchObject({
      errors: { port: [expect.any(String)], publicBaseUrl: [expect.any(String)], colour: ['is not a known field'] }
    })
    await expect(store.update({ smtp: { host: 'h', port: 25, secure: false, from: 'a@b.c', password: 'x' } }, undefined)).rejects.toBeInstanceOf(ValidationError)
  })
})
