/**
 * Envelope encryption (DESIGN §3): a 32-byte master key wraps the vault's
 * secret-hash key and each tenant's data and fingerprint keys. Only wrapped
 * keys are stored; the master key itself lives outside the database.
 */
import { link, open as openFile, readFile, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { DecryptionError, open, seal } from './aead'
import { randomBytes } from './random'
import { KEY_BYTES, type MasterKey } from './types'

export const MASTER_KEY_FILE = 'master.key'

/** Why the vault cannot be opened; the message and the hint are safe to print. */
export class CannotUnlockError extends Error {
  constructor(
    reason: string,
    /** How to fix it, when the reason does not say. */
    readonly hint?: string
  ) {
    super(`Cannot unlock vault: ${reason}`)
    this.name = 'CannotUnlockError'
  }
}

/** A fresh random master key. */
export function generateMasterKey(): MasterKey {
  return randomBytes(KEY_BYTES) as MasterKey
}

/** Decodes a base64 master key, refusing anything that is not exactly 32 bytes. */
export function decodeMasterKey(encoded: string, source: string): MasterKey {
  const bytes = Buffer.from(encoded.trim(), 'base64')
  if (bytes.length !== KEY_BYTES) {
    throw new CannotUnlockError(`${source} must be the base64 encoding of ${KEY_BYTES} bytes.`, 'use the key this vault was created with (restore it from a backup if it was damaged).')
  }
  return new Uint8Array(bytes) as MasterKey
}

/**
 * Writes a new master key file readable only by its owner (mode 0600); never
 * overwrites. The key is written aside, flushed to disk, then linked into
 * place, so a crash or power cut never leaves a partial key file behind.
 */
export async function createMasterKeyFile(dataDir: string): Promise<MasterKey> {
  const key = generateMasterKey()
  const path = join(dataDir, MASTER_KEY_FILE)
  const temporary = `${path}.${process.pid}.tmp`
  const file = await openFile(temporary, 'w', 0o600)
  try {
    await file.chmod(0o600)
    await file.writeFile(Buffer.from(key).toString('base64') + '\n')
    await file.sync()
  } finally {
    await file.close()
  }
  try {
    await link(temporary, path)
  } finally {
    await unlink(temporary)
  }
  return key
}

/**
 * The headless master key: `TESSERA_MASTER_KEY` if set, else `<dataDir>/master.key`.
 * Returns undefined when neither exists.
 */
export async function loadMasterKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<MasterKey | undefined> {
  if (env.TESSERA_MASTER_KEY) return decodeMasterKey(env.TESSERA_MASTER_KEY, 'TESSERA_MASTER_KEY')
  const path = join(dataDir, MASTER_KEY_FILE)
  try {
    if (process.platform !== 'win32' && ((await stat(path)).mode & 0o077) !== 0) {
      throw new CannotUnlockError(`${path} is readable by other users; run chmod 600 on it.`)
    }
    return decodeMasterKey(await readFile(path, 'utf8'), path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** Wraps a key under the master key, bound to a label naming its purpose and owner. */
export function wrapKey(master: MasterKey, key: Uint8Array, label: string): Uint8Array {
  return seal(master, key, `tessera:key:${label}`)
}

/** Unwraps a key; a wrong master key becomes CannotUnlockError. */
export function unwrapKey(master: MasterKey, wrapped: Uint8Array, label: string): Uint8Array {
  try {
    return open(master, wrapped, `tessera:key:${label}`)
  } catch (error) {
    if (error instanceof DecryptionError) {
      throw new CannotUnlockError('the master key does not match this vault.', 'use the key this vault was created with: TESSERA_MASTER_KEY, else master.key in the data directory.')
    }
    throw error
  }
}
