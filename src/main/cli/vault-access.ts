/**
 * What the commands need before they open a vault: its database and its
 * master key, each missing one reported with the way to fix it.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createMasterKeyFile, loadMasterKey, type MasterKey } from '../bootstrap/master-key'
import { withOfflineVault, type OfflineVault } from '../bootstrap/offline-vault'
import { DATABASE_FILE, openVault, vaultExists, type Vault } from '../bootstrap/vault'
import { createLogger } from '../infra/logger'
import { requireDataDir } from './data-dir'
import { CliError } from './exit-codes'

/** Where a command's vault is: its data directory, and for a team vault its PostgreSQL database. */
export interface VaultPlace {
  dataDir: string
  databaseUrl?: string
}

/** The vault a command's `--data-dir` and `--database-url` name. */
export function placeOf(options: Record<string, unknown>): VaultPlace {
  return { dataDir: options['data-dir'] as string, databaseUrl: options['database-url'] as string | undefined }
}

/** @throws CliError (NOT_INITIALISED) when the data directory (or the team vault's database) holds no vault */
export async function requireVault(place: VaultPlace): Promise<void> {
  if (place.databaseUrl) {
    // Looked at without writing: a database holding no vault is left as it was.
    if (!(await vaultExists(place))) throw new CliError('NOT_INITIALISED', 'No vault in that database.', 'create one with `tessera init --database-url …`, or check --database-url (or TESSERA_DATABASE_URL).')
    return
  }
  const dir = place.dataDir
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
export async function withUnlockedVault<T>(place: VaultPlace, work: (vault: OfflineVault) => Promise<T>): Promise<T> {
  await requireDataDir(place.dataDir, 'write')
  await requireVault(place)
  return withOfflineVault(place, await requireMasterKey(place.dataDir), work)
}

/**
 * Opens the vault for a command that changes it (taking its lock, so it is
 * refused while `tessera serve` or the desktop app holds it), runs `work`, closes it.
 */
export async function withOpenVault<T>(place: VaultPlace, work: (vault: Vault) => Promise<T>): Promise<T> {
  await requireDataDir(place.dataDir, 'write')
  await requireVault(place)
  const vault = await openVault({ ...place, masterKey: await requireMasterKey(place.dataDir), logger: createLogger() })
  try {
    return await work(vault)
  } finally {
    await vault.close()
  }
}
