/**
 * Where a headless vault's master key lives, and the master key as the doors
 * handle it: `TESSERA_MASTER_KEY` (base64 of 32 bytes) if set, else
 * `<data-dir>/master.key` (mode 0600), created by `tessera init`. The desktop
 * app keeps it in the OS keychain instead (electron/keychain.ts), through the
 * same encoding.
 */
import { chmod, link, open as openFile, readFile, rename, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { openJson } from '../crypto/aead'
import { generateMasterKey } from '../crypto/keys'
import { KEY_BYTES, type MasterKey } from '../crypto/types'
import { CannotUnlockError } from '../domain/errors'

export { generateMasterKey, type MasterKey }

/** Bytes in a master key. */
export const MASTER_KEY_BYTES = KEY_BYTES

export const MASTER_KEY_FILE = 'master.key'

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
  await writeSynced(temporary, encodeMasterKey(key), 'w')
  try {
    await link(temporary, path)
  } finally {
    await unlink(temporary)
  }
  return key
}

/** The text of a key file: base64 and a newline. */
export function encodeMasterKey(key: MasterKey): string {
  return Buffer.from(key).toString('base64') + '\n'
}

/** Writes a new file (mode 0600, flag as given) and flushes it to disk before resolving. */
async function writeSynced(path: string, content: string | Uint8Array, flag: 'w' | 'wx'): Promise<void> {
  const file = await openFile(path, flag, 0o600)
  try {
    await file.writeFile(content)
    await file.sync()
  } finally {
    await file.close()
  }
  await chmod(path, 0o600)
}

/**
 * Replaces a key file so that a crash at any moment leaves the old file or the
 * new one, whole: a temporary file beside it is written and flushed, renamed
 * over it, and the directory flushed.
 */
export async function replaceKeyFile(path: string, content: string | Uint8Array): Promise<void> {
  const temporary = `${path}.tmp`
  await writeSynced(temporary, content, 'w')
  await rename(temporary, path)
  await syncDirectory(dirname(path))
}

/** Writes a master key to a new file (never overwriting one), flushed to disk. */
export async function createKeyFile(path: string, key: MasterKey): Promise<void> {
  await writeSynced(path, encodeMasterKey(key), 'wx')
  await syncDirectory(dirname(path))
}

async function syncDirectory(directory: string): Promise<void> {
  // Makes the rename itself durable; Windows cannot open a directory for this, and NTFS journals renames.
  if (process.platform === 'win32') return
  const handle = await openFile(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Replaces `<dataDir>/master.key` with `key`, atomically (master-key rotation). */
export async function replaceMasterKeyFile(dataDir: string, key: MasterKey): Promise<void> {
  await replaceKeyFile(join(dataDir, MASTER_KEY_FILE), encodeMasterKey(key))
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

/**
 * Opens a JSON value sealed under the master key itself: only the SMTP password
 * of earlier desktop settings files, which moves into the vault on first unlock.
 */
export function openUnderMasterKey<T>(master: MasterKey, sealed: Uint8Array, associatedData: string): T {
  return openJson<T>(master, sealed, associatedData)
}
