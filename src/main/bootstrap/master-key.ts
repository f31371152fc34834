/**
 * Where a headless vault's master key lives, and the master key as the doors
 * handle it: `TESSERA_MASTER_KEY` (base64 of 32 bytes) if set, else
 * `<data-dir>/master.key` (mode 0600), created by `tessera init`. The desktop
 * app keeps it in the OS keychain instead (electron/keychain.ts), through the
 * same encoding.
 */
import { link, readFile, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { openJson } from '../crypto/aead'
import { generateMasterKey } from '../crypto/keys'
import { KEY_BYTES, type MasterKey } from '../crypto/types'
import { CannotUnlockError } from '../domain/errors'
import { replacePrivateFile, syncDirectory, temporaryBeside, writeNewPrivateFile } from '../infra/private-files'

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
  const temporary = temporaryBeside(path)
  await writeNewPrivateFile(temporary, encodeMasterKey(key))
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

/**
 * Replaces a key file so that a crash at any moment leaves the old file or the
 * new one, whole (see replacePrivateFile).
 */
export async function replaceKeyFile(path: string, content: string | Uint8Array): Promise<void> {
  await replacePrivateFile(path, content)
}

/** Writes a master key to a new file (never overwriting one, nor following a symlink), flushed to disk; removed again if the write fails. */
export async function createKeyFile(path: string, key: MasterKey): Promise<void> {
  await writeNewPrivateFile(path, encodeMasterKey(key))
  await syncDirectory(dirname(path))
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
