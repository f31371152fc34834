/**
 * What the commands need before they open a vault: its database and its
 * master key, each missing one reported with the way to fix it.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createMasterKeyFile, loadMasterKey, type MasterKey } from '../bootstrap/master-key'
import { withOfflineVault, type OfflineVault } from '../bootstrap/offline-vault'
import { DATABASE_FILE, openVault, type Vault } from '../bootstrap/vault'
import { createLogger } from '../infra/logger'
import { requireDataDir } from './data-dir'
import { CliError } from './exit-codes'

/** @throws CliError (NOT_INITIALISED) when `dir` holds no vault database */
export function requireVault(dir: string): void {
  if (!existsSync(join(dir, DATABASE_FILE))) {
    throw new CliError('NOT_INITIALISED', `No vault in ${dir}.`, `create one with \`tessera init --data-dir ${dir}\`, or point --data-dir (or TESSERA_DATA_DIR) at the right directory.`)
  }
}

/** The vault's master key: TESSERA_MASTER_KEY, else `<dir>/master.key`. */
export async function requireMasterKey(dir: string): Promise<MasterKey> {
  const key = await loadMasterKey(dir)
  if (key) return key
  throw new CliError(
    'NOT_INITIALISED',
    `Cannot unlock vault: no master key for the vault in ${dir}.`,
    `set TESSERA_MASTER_KEY to the vault's key (base64 of 32 bytes), or put its master.key file back in ${dir}.`
  )
}

/** `init`: the existing key (from a previous, interrupted init or TESSERA_MASTER_KEY), else a new master.key. */
export async function loadOrCreateMasterKey(dir: string): Promise<MasterKey> {
  return (await loadMasterKey(dir)) ?? (await createMasterKeyFile(dir))
}

/**
 * Opens the vault without taking its lock (see bootstrap/offline-vault.ts), so
 * the commands that only read (`outbox`, `keys status`, `logs`) work while
 * `tessera serve` or the desktop app holds the vault.
 */
export async function withUnlockedVault<T>(dir: string, work: (vault: OfflineVault) => Promise<T>): Promise<T> {
  await requireDataDir(dir, 'write')
  requireVault(dir)
  return withOfflineVault(dir, await requireMasterKey(dir), work)
}

/**
 * Opens the vault for a command that changes it (taking its lock, so it is
 * refused while `tessera serve` or the desktop app holds it), runs `work`, closes it.
 */
export async function withOpenVault<T>(dataDir: string, work: (vault: Vault) => Promise<T>): Promise<T> {
  await requireDataDir(dataDir, 'write')
  requireVault(dataDir)
  const vault = await openVault({ dataDir, masterKey: await requireMasterKey(dataDir), logger: createLogger() })
  try {
    return await work(vault)
  } finally {
    await vault.close()
  }
}
