/**
 * Where the desktop app keeps the vault's master key. The Electron keychain
 * (safeStorage) implements this in `electron/keychain.ts`; the key-file mode
 * below is the CLI's `master.key` (0600) and needs no Electron at all.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { KeyStorage } from '../../shared/ipc'
import { BusinessRuleError, CannotUnlockError } from '../app'
import { createMasterKeyFile, loadMasterKey, MASTER_KEY_FILE, replaceMasterKeyFile, type MasterKey } from '../bootstrap/master-key'

export interface MasterKeyStore {
  /** Whether the OS keychain can protect a key on this machine. */
  readonly keychainAvailable: boolean
  /** Where this data dir's master key is kept, or undefined when there is none yet. */
  locate(): Promise<KeyStorage | undefined>
  /** The master key, or undefined when there is none; CannotUnlockError when it exists but cannot be read. */
  load(): Promise<MasterKey | undefined>
  /** Makes and stores a new master key (first run). */
  create(storage: 'keychain' | 'key-file'): Promise<MasterKey>
  /**
   * Stores `key` in place of the current master key, where that one is kept,
   * atomically: a crash leaves the old key or the new one (master-key rotation).
   */
  replace(key: MasterKey): Promise<void>
}

/** A key in TESSERA_MASTER_KEY cannot be replaced by the app. */
export const ENVIRONMENT_KEY_ROTATION =
  'The master key comes from TESSERA_MASTER_KEY; rotate it with `tessera keys rotate-master --new-key-file FILE` while the app is closed.'

/** The key-file store shared with the CLI: `TESSERA_MASTER_KEY`, else `<dataDir>/master.key`. */
export function keyFileStore(dataDir: string, env: NodeJS.ProcessEnv = process.env): MasterKeyStore {
  return {
    keychainAvailable: false,
    async locate() {
      if (env.TESSERA_MASTER_KEY) return 'environment'
      return existsSync(join(dataDir, MASTER_KEY_FILE)) ? 'key-file' : undefined
    },
    load: () => loadMasterKey(dataDir, env),
    async create(storage) {
      if (storage === 'keychain') throw new CannotUnlockError('the OS keychain is not available on this machine; use a key file.')
      return createMasterKeyFile(dataDir)
    },
    async replace(key) {
      if (env.TESSERA_MASTER_KEY) throw new BusinessRuleError(ENVIRONMENT_KEY_ROTATION)
      await replaceMasterKeyFile(dataDir, key)
    }
  }
}
