/**
 * The master key in the OS keychain: Electron's safeStorage (Keychain on macOS,
 * DPAPI on Windows, libsecret/kwallet on Linux) encrypts it into
 * `<dataDir>/master.key.safe` (0600). Where no keychain is available (Linux
 * without a secret service falls back to a hard-coded "basic_text" password,
 * which protects nothing) the app says so and offers the key-file mode: the
 * same `master.key` the CLI uses.
 */
import { existsSync } from 'node:fs'
import { readFile, writeFile, chmod, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { safeStorage } from 'electron'
import { CannotUnlockError } from '../app'
import { decodeMasterKey, generateMasterKey, replaceKeyFile, type MasterKey } from '../bootstrap/master-key'
import { keyFileStore, type MasterKeyStore } from '../desktop/key-store'
import { memoryTeamCredentialStore, type TeamCredentialStore, type TeamCredentials } from '../desktop/team-connection'

export const KEYCHAIN_KEY_FILE = 'master.key.safe'

/** Whether safeStorage gives real protection here; call after `app` is ready. */
export async function isKeychainAvailable(platform: NodeJS.Platform = process.platform): Promise<boolean> {
  if (!(await safeStorage.isAsyncEncryptionAvailable())) return false
  return platform !== 'linux' || safeStorage.getSelectedStorageBackend() !== 'basic_text'
}

/**
 * The desktop key store: the keychain-wrapped key when present, else the key
 * file (or `TESSERA_MASTER_KEY`), so a vault made by `tessera init` opens too.
 */
export async function createKeychainStore(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<MasterKeyStore> {
  const keychainAvailable = await isKeychainAvailable()
  const fallback = keyFileStore(dataDir, env)
  const wrappedKeyPath = join(dataDir, KEYCHAIN_KEY_FILE)

  return {
    keychainAvailable,
    async locate() {
      if (!env.TESSERA_MASTER_KEY && existsSync(wrappedKeyPath)) return 'keychain'
      return fallback.locate()
    },
    async load() {
      if (env.TESSERA_MASTER_KEY || !existsSync(wrappedKeyPath)) return fallback.load()
      if (!keychainAvailable) {
        throw new CannotUnlockError('the master key is kept in the OS keychain, which is not available in this session.')
      }
      try {
        const { result } = await safeStorage.decryptStringAsync(await readFile(wrappedKeyPath))
        return decodeMasterKey(result, KEYCHAIN_KEY_FILE)
      } catch (error) {
        if (error instanceof CannotUnlockError) throw error
        throw new CannotUnlockError('the OS keychain could not decrypt the master key.')
      }
    },
    async create(storage): Promise<MasterKey> {
      if (storage === 'key-file') return fallback.create('key-file')
      if (!keychainAvailable) throw new CannotUnlockError('the OS keychain is not available on this machine; use a key file.')
      const key = generateMasterKey()
      const wrapped = await safeStorage.encryptStringAsync(Buffer.from(key).toString('base64'))
      await writeFile(wrappedKeyPath, wrapped, { mode: 0o600, flag: 'wx' })
      await chmod(wrappedKeyPath, 0o600)
      return key
    },
    async replace(key) {
      if (env.TESSERA_MASTER_KEY || !existsSync(wrappedKeyPath)) return fallback.replace(key)
      if (!keychainAvailable) throw new CannotUnlockError('the OS keychain is not available in this session.')
      await replaceKeyFile(wrappedKeyPath, await safeStorage.encryptStringAsync(Buffer.from(key).toString('base64')))
    }
  }
}

/** Where the team vault connection (its URL, keys and any private CA certificate) is kept, encrypted by the OS keychain. */
export const TEAM_CONNECTION_FILE = 'team-vault.safe'

/**
 * The team vault connection in the OS keychain: safeStorage encrypts it into
 * `<dataDir>/team-vault.safe` (0600). Without a keychain nothing is written:
 * the connection lasts until the app quits.
 */
export async function createTeamCredentialStore(dataDir: string): Promise<TeamCredentialStore> {
  if (!(await isKeychainAvailable())) return memoryTeamCredentialStore()
  const file = join(dataDir, TEAM_CONNECTION_FILE)
  return {
    persistent: true,
    async load() {
      if (!existsSync(file)) return undefined
      const { result } = await safeStorage.decryptStringAsync(await readFile(file))
      return JSON.parse(result) as TeamCredentials
    },
    async save(credentials) {
      await replaceKeyFile(file, await safeStorage.encryptStringAsync(JSON.stringify(credentials)))
    },
    async clear() {
      await rm(file, { force: true })
    }
  }
}
