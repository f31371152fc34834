import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

const keychain = { available: true, backend: 'gnome_libsecret' }

vi.mock('electron', () => ({
  safeStorage: {
    isAsyncEncryptionAvailable: vi.fn(async () => keychain.available),
    getSelectedStorageBackend: vi.fn(() => keychain.backend),
    // A stand-in cipher: reversible, and the output never contains the input.
    encryptStringAsync: vi.fn(async (text: string) => Buffer.from(`os:${Buffer.from(text).toString('hex')}`)),
    decryptStringAsync: vi.fn(async (buffer: Buffer) => {
      const text = buffer.toString()
      if (!text.startsWith('os:')) throw new Error('bad ciphertext')
      return { result: Buffer.from(text.slice(3), 'hex').toString(), shouldReEncrypt: false }
    })
  }
}))

const { createKeychainStore, isKeychainAvailable, KEYCHAIN_KEY_FILE } = await import('../../src/main/electron/keychain')
const { createMasterKeyFile, generateMasterKey, MASTER_KEY_FILE } = await import('../../src/main/bootstrap/master-key')
const { CannotUnlockError } = await import('../../src/main/domain/errors')
const { readySodium } = await import('../../src/main/crypto/sodium')

describe('keychain store', () => {
  let dataDir: string

  beforeEach(async () => {
    await readySodium()
    keychain.available = true
    keychain.backend = 'gnome_libsecret'
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-keychain-'))
  })

  afterEach(() => rm(dataDir, { recursive: true, force: true }))

  it('wraps a new master key with the OS keychain into master.key.safe (0600), never in the clear', async () => {
    const store = await createKeychainStore(dataDir, {})
    expect(store.keychainAvailable).toBe(true)
    const key = await store.create('keychain')
    const file = join(dataDir, KEYCHAIN_KEY_FILE)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect((await readFile(file, 'utf8')).includes(Buffer.from(key).toString('base64'))).toBe(false)
    expect(existsSync(join(dataDir, MASTER_KEY_FILE))).toBe(false)
    expect(await store.locate()).toBe('keychain')
    expect(await store.load()).toEqual(key)
  })

  it('treats Linux without a secret service (basic_text) as no keychain', async () => {
    keychain.backend = 'basic_text'
    expect(await isKeychainAvailable('linux')).toBe(false)
    expect(await isKeychainAvailable('darwin')).toBe(true)
    keychain.available = false
    expect(await isKeychainAvailable('win32')).toBe(false)
  })

  it('without a keychain, refuses keychain mode and offers the CLI key file instead', async () => {
    keychain.available = false
    const store = await createKeychainStore(dataDir, {})
    expect(store.keychainAvailable).toBe(false)
    await expect(store.create('keychain')).rejects.toBeInstanceOf(CannotUnlockError)
    const key = await store.create('key-file')
    expect((await stat(join(dataDir, MASTER_KEY_FILE))).mode & 0o777).toBe(0o600)
    expect(await store.locate()).toBe('key-file')
    expect(await store.load()).toEqual(key)
  })

  it('opens a vault made by `tessera init` with its master.key', async () => {
    const key = await createMasterKeyFile(dataDir)
    const store = await createKeychainStore(dataDir, {})
    expect(await store.locate()).toBe('key-file')
    expect(await store.load()).toEqual(key)
  })

  it('prefers TESSERA_MASTER_KEY when it is set', async () => {
    const encoded = Buffer.alloc(32, 7).toString('base64')
    const store = await createKeychainStore(dataDir, { TESSERA_MASTER_KEY: encoded })
    expect(await store.locate()).toBe('environment')
    expect(Buffer.from((await store.load())!)).toEqual(Buffer.alloc(32, 7))
  })

  it('says so when the key is in the keychain but the keychain is gone, or cannot decrypt it', async () => {
    await (await createKeychainStore(dataDir, {})).create('keychain')
    keychain.available = false
    await expect((await createKeychainStore(dataDir, {})).load()).rejects.toThrow(/keychain, which is not available/)
    keychain.available = true
    await writeFile(join(dataDir, KEYCHAIN_KEY_FILE), 'garbage')
    await expect((await createKeychainStore(dataDir, {})).load()).rejects.toThrow(/could not decrypt/)
  })

  it('never overwrites an existing key', async () => {
    const store = await createKeychainStore(dataDir, {})
    await store.create('keychain')
    await expect(store.create('keychain')).rejects.toThrow()
  })

  it('replaces the master key where it is kept: in the keychain file, or in master.key', async () => {
    const store = await createKeychainStore(dataDir, {})
    await store.create('keychain')
    const next = generateMasterKey()
    await store.replace(next)
    expect(await store.load()).toEqual(next)
    expect((await stat(join(dataDir, KEYCHAIN_KEY_FILE))).mode & 0o777).toBe(0o600)
    expect((await readFile(join(dataDir, KEYCHAIN_KEY_FILE), 'utf8')).includes(Buffer.from(next).toString('base64'))).toBe(false)
    expect(existsSync(join(dataDir, MASTER_KEY_FILE))).toBe(false)

    const fileDir = await mkdtemp(join(tmpdir(), 'tessera-keyfile-'))
    try {
      await createMasterKeyFile(fileDir)
      const fileStore = await createKeychainStore(fileDir, {})
      await fileStore.replace(next)
      expect(await fileStore.load()).toEqual(next)
      await expect((await createKeychainStore(fileDir, { TESSERA_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') })).replace(next)).rejects.toThrow(/TESSERA_MASTER_KEY/)
    } finally {
      await rm(fileDir, { recursive: true, force: true })
    }
  })
})
