import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../src/main/crypto/keys'
import { readySodium } from '../../src/main/crypto/sodium'
import { sealJson } from '../../src/main/crypto/aead'
import { DEFAULT_PORT, SETTINGS_FILE, SettingsStore, type SettingsChange, type SettingsSecrets } from '../../src/main/desktop/settings'
import { SMTP_PASSWORD_SETTING } from '../../src/main/app/sealed-settings.service'
import { ValidationError } from '../../src/main/domain/errors'

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
    expect(store.view()).toEqual({ port: DEFAULT_PORT, idleLockMinutes: 15, auditRetentionDays: 0 })
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
    expect(view.smtp).toEqual({ host: 'smtp.example.com', port: 587, secure: false, requireTLS: true, user: 'vault', from: 'vault@example.com', hasPassword: true })
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

  it('hands each change to the audit before saving it, the port alone marked as such, and what needs the service restarted', async () => {
    const { secrets } = fakeVault()
    const store = new SettingsStore(dataDir)
    const audited: SettingsChange[] = []
    const audit = async (change: SettingsChange) => void audited.push(change)
    await store.update({ port: 5000 }, undefined, audit)
    await store.update({ port: 5000, publicBaseUrl: 'https://vault.example.com' }, undefined, audit)
    await store.update({ publicBaseUrl: null, port: 5001 }, undefined, audit)
    await store.update({ port: 5001 }, undefined, audit)
    await store.update({ idleLockMinutes: 5, auditRetentionDays: 30 }, undefined, audit)
    const smtp = { host: 'smtp.example.com', port: 587, secure: false, user: 'vault', from: 'vault@example.com' }
    await store.update({ smtp: { ...smtp, password: 'hunter2' } }, secrets, audit)
    await store.update({ smtp: { ...smtp, password: 'again' } }, secrets, audit)
    expect(audited).toEqual([
      { message: `Service port changed from ${DEFAULT_PORT} to 5000`, portOnly: true, restartsService: true },
      { message: 'Invitation link URL set to https://vault.example.com', portOnly: false, restartsService: true },
      { message: 'Service port changed from 5000 to 5001; Invitation link URL removed', portOnly: false, restartsService: true },
      { message: 'Idle lock changed from 15 to 5 minutes; Audit retention changed from for ever to 30 days', portOnly: false, restartsService: false },
      { message: 'SMTP settings added (host smtp.example.com)', portOnly: false, restartsService: true },
      { message: 'SMTP settings changed: password replaced', portOnly: false, restartsService: true }
    ])
    const refusing = async () => Promise.reject(new Error('cannot audit'))
    await expect(store.update({ port: 6000 }, undefined, refusing)).rejects.toThrow('cannot audit')
    expect(store.port).toBe(5001)
  })

  it('drops the stored password when the host or the user changes, even with hasPassword, and says so to the audit', async () => {
    const { stored, secrets } = fakeVault()
    const password = () => store.mailConfig(stored.get(SMTP_PASSWORD_SETTING)).password
    const store = new SettingsStore(dataDir)
    const audited: string[] = []
    const audit = async ({ message }: SettingsChange) => void audited.push(message)
    const smtp = { host: 'smtp.example.com', port: 587, secure: false, user: 'vault', from: 'vault@example.com' }
    await store.update({ smtp: { ...smtp, password: 'hunter2' } }, secrets, audit)
    await store.update({ smtp: { ...smtp, port: 2587, hasPassword: true } }, secrets, audit)
    expect(password()).toBe('hunter2')

    await store.update({ smtp: { ...smtp, host: 'smtp.evil.example', hasPassword: true } }, secrets, audit)
    expect(store.view().smtp).toMatchObject({ host: 'smtp.evil.example', hasPassword: false })
    expect(password()).toBeUndefined()
    expect(stored.has(SMTP_PASSWORD_SETTING)).toBe(false)

    await store.update({ smtp: { ...smtp, password: 'hunter2' } }, secrets, audit)
    await store.update({ smtp: { ...smtp, user: 'someone-else', hasPassword: true } }, secrets, audit)
    expect(password()).toBeUndefined()
    // A new password entered with the new server is kept.
    await store.update({ smtp: { ...smtp, host: 'smtp2.example.com', password: 'n3w' } }, secrets, audit)
    expect(password()).toBe('n3w')
    await store.update({ smtp: null }, secrets, audit)

    expect(audited).toEqual([
      'SMTP settings added (host smtp.example.com)',
      'SMTP settings changed',
      'SMTP settings changed: host or user changed (host smtp.evil.example); stored password dropped',
      'SMTP settings changed: host or user changed (host smtp.example.com); password set',
      'SMTP settings changed: host or user changed (host smtp.example.com); stored password dropped',
      'SMTP settings changed: host or user changed (host smtp2.example.com); password set',
      'SMTP settings removed'
    ])
    expect(audited.join('\n')).not.toMatch(/hunter2|n3w|someone-else/)
  })

  it('requires TLS unless turned off explicitly, audits turning it off, and does not audit a save that changes nothing', async () => {
    const store = new SettingsStore(dataDir)
    const audited: string[] = []
    const audit = async ({ message }: SettingsChange) => void audited.push(message)
    const smtp = { host: 'smtp.example.com', port: 587, secure: false, from: 'vault@example.com' }
    await store.update({ smtp }, undefined, audit)
    expect(store.view().smtp?.requireTLS).toBe(true)
    expect(store.mailConfig(undefined).requireTLS).toBeUndefined()
    await store.update({ smtp: { ...smtp, requireTLS: true } }, undefined, audit)
    await store.update({ smtp: { ...smtp, requireTLS: false } }, undefined, audit)
    expect(store.mailConfig(undefined).requireTLS).toBe(false)
    expect(audited).toEqual(['SMTP settings added (host smtp.example.com)', 'SMTP settings changed: TLS no longer required'])
  })

  it('saves nothing when the audit fails', async () => {
    const store = new SettingsStore(dataDir)
    const failing = async () => Promise.reject(new Error('vault locked'))
    await expect(store.update({ smtp: { host: 'smtp.example.com', port: 587, secure: false, from: 'a@b.c' } }, undefined, failing)).rejects.toThrow('vault locked')
    expect(store.view().smtp).toBeUndefined()
    await store.load()
    expect(store.view().smtp).toBeUndefined()
  })

  it('still loads a file of an earlier version holding a link URL a change now refuses, with its other settings', async () => {
    const smtp = { host: 'smtp.example.com', port: 587, secure: false, from: 'vault@example.com' }
    await writeFile(join(dataDir, SETTINGS_FILE), JSON.stringify({ port: 5000, publicBaseUrl: 'https://vault.example.com/?team=1', smtp }))
    const store = new SettingsStore(dataDir)
    await store.load()
    expect(store.view()).toMatchObject({ port: 5000, publicBaseUrl: 'https://vault.example.com/?team=1', smtp })
    await expect(store.update({ publicBaseUrl: 'https://vault.example.com/?team=1' }, undefined)).rejects.toMatchObject({ errors: { publicBaseUrl: [expect.stringMatching(/query/)] } })
  })

  it('rejects bad values and unknown fields, naming each', async () => {
    const store = new SettingsStore(dataDir)
    await expect(store.update({ port: 70000, publicBaseUrl: 'ftp://x', colour: 'red' }, undefined)).rejects.toMatchObject({
      errors: { port: [expect.any(String)], publicBaseUrl: [expect.any(String)], colour: ['is not a known field'] }
    })
    await expect(store.update({ smtp: { host: 'h', port: 25, secure: false, from: 'a@b.c', password: 'x' } }, undefined)).rejects.toBeInstanceOf(ValidationError)
  })
})
