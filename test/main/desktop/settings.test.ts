import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../../src/main/crypto/keys'
import { readySodium } from '../../../src/main/crypto/sodium'
import { DEFAULT_PORT, SETTINGS_FILE, SettingsStore, type SettingsChange } from '../../../src/main/desktop/settings'
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

  it('seals the SMTP password under the master key and never shows it again', async () => {
    const key = generateMasterKey()
    const store = new SettingsStore(dataDir)
    const view = await store.update({ smtp: { host: 'smtp.example.com', port: 587, secure: false, user: 'vault', password: 'hunter2', from: 'vault@example.com' } }, key)
    expect(view.smtp).toEqual({ host: 'smtp.example.com', port: 587, secure: false, requireTLS: true, user: 'vault', from: 'vault@example.com', hasPassword: true })
    const file = await readFile(join(dataDir, SETTINGS_FILE), 'utf8')
    expect(file).not.toContain('hunter2')
    expect((await stat(join(dataDir, SETTINGS_FILE))).mode & 0o777).toBe(0o600)

    const reloaded = new SettingsStore(dataDir)
    await reloaded.load()
    expect(reloaded.mailConfig(key)).toMatchObject({ host: 'smtp.example.com', password: 'hunter2' })
    // Another vault's key cannot open it.
    expect(reloaded.mailConfig(generateMasterKey()).password).toBeUndefined()
  })

  it('keeps the stored password when a change says hasPassword without a new one', async () => {
    const key = generateMasterKey()
    const store = new SettingsStore(dataDir)
    const smtp = { host: 'smtp.example.com', port: 465, secure: true, from: 'vault@example.com' }
    await store.update({ smtp: { ...smtp, password: 'hunter2' } }, key)
    await store.update({ smtp: { ...smtp, port: 2465, hasPassword: true } }, key)
    expect(store.mailConfig(key)).toMatchObject({ port: 2465, password: 'hunter2' })
    await store.update({ smtp: null }, key)
    expect(store.view().smtp).toBeUndefined()
  })

  it('hands each change to the audit before saving it, the port alone marked as such', async () => {
    const store = new SettingsStore(dataDir)
    const audited: SettingsChange[] = []
    const audit = async (change: SettingsChange) => void audited.push(change)
    await store.update({ port: 5000 }, undefined, audit)
    await store.update({ port: 5000, publicBaseUrl: 'https://vault.example.com' }, undefined, audit)
    await store.update({ publicBaseUrl: null, port: 5001 }, undefined, audit)
    await store.update({ port: 5001 }, undefined, audit)
    expect(audited).toEqual([
      { message: `Service port changed from ${DEFAULT_PORT} to 5000`, portOnly: true },
      { message: 'Invitation link URL set to https://vault.example.com', portOnly: false },
      { message: 'Service port changed from 5000 to 5001; Invitation link URL removed', portOnly: false }
    ])
    const refusing = async () => Promise.reject(new Error('cannot audit'))
    await expect(store.update({ port: 6000 }, undefined, refusing)).rejects.toThrow('cannot audit')
    expect(store.port).toBe(5001)
  })

  it('drops the stored password when the host or the user changes, even with hasPassword, and says so to the audit', async () => {
    const key = generateMasterKey()
    const store = new SettingsStore(dataDir)
    const audited: string[] = []
    const audit = async ({ message }: SettingsChange) => void audited.push(message)
    const smtp = { host: 'smtp.example.com', port: 587, secure: false, user: 'vault', from: 'vault@example.com' }
    await store.update({ smtp: { ...smtp, password: 'hunter2' } }, key, audit)
    await store.update({ smtp: { ...smtp, port: 2587, hasPassword: true } }, key, audit)
    expect(store.mailConfig(key).password).toBe('hunter2')

    await store.update({ smtp: { ...smtp, host: 'smtp.evil.example', hasPassword: true } }, key, audit)
    expect(store.view().smtp).toMatchObject({ host: 'smtp.evil.example', hasPassword: false })
    expect(store.mailConfig(key).password).toBeUndefined()
    expect(await readFile(join(dataDir, SETTINGS_FILE), 'utf8')).not.toContain('sealedPassword')

    await store.update({ smtp: { ...smtp, password: 'hunter2' } }, key, audit)
    await store.update({ smtp: { ...smtp, user: 'someone-else', hasPassword: true } }, key, audit)
    expect(store.mailConfig(key).password).toBeUndefined()
    // A new password entered with the new server is kept.
    await store.update({ smtp: { ...smtp, host: 'smtp2.example.com', password: 'n3w' } }, key, audit)
    expect(store.mailConfig(key).password).toBe('n3w')
    await store.update({ smtp: null }, key, audit)

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
    expect(store.mailConfig(generateMasterKey()).requireTLS).toBeUndefined()
    await store.update({ smtp: { ...smtp, requireTLS: true } }, undefined, audit)
    await store.update({ smtp: { ...smtp, requireTLS: false } }, undefined, audit)
    expect(store.mailConfig(generateMasterKey()).requireTLS).toBe(false)
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

  it('rejects bad values and unknown fields, naming each', async () => {
    const store = new SettingsStore(dataDir)
    await expect(store.update({ port: 70000, publicBaseUrl: 'ftp://x', colour: 'red' }, undefined)).rejects.toMatchObject({
      errors: { port: [expect.any(String)], publicBaseUrl: [expect.any(String)], colour: ['is not a known field'] }
    })
    await expect(store.update({ smtp: { host: 'h', port: 25, secure: false, from: 'a@b.c', password: 'x' } }, undefined)).rejects.toBeInstanceOf(ValidationError)
  })
})
