import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../../src/main/crypto/keys'
import { readySodium } from '../../../src/main/crypto/sodium'
import { DEFAULT_PORT, SETTINGS_FILE, SettingsStore } from '../../../src/main/desktop/settings'
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
    expect(view.smtp).toEqual({ host: 'smtp.example.com', port: 587, secure: false, user: 'vault', from: 'vault@example.com', hasPassword: true })
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

  it('rejects bad values and unknown fields, naming each', async () => {
    const store = new SettingsStore(dataDir)
    await expect(store.update({ port: 70000, publicBaseUrl: 'ftp://x', colour: 'red' }, undefined)).rejects.toMatchObject({
      errors: { port: [expect.any(String)], publicBaseUrl: [expect.any(String)], colour: ['is not a known field'] }
    })
    await expect(store.update({ smtp: { host: 'h', port: 25, secure: false, from: 'a@b.c', password: 'x' } }, undefined)).rejects.toBeInstanceOf(ValidationError)
  })
})
