/**
 * Files only their owner may read (keys, the lock record, audit exports),
 * written so that nobody else with a foothold in the directory can redirect
 * them: a new file is created exclusively (O_EXCL refuses an existing file
 * and does not follow a symlink planted at its name), a temporary one gets a
 * random name, and the mode is set on the open handle, whatever the umask.
 */
import { randomBytes } from 'node:crypto'
import { open, rename, unlink, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'

const OWNER_ONLY = 0o600

/** A name beside `path` for a temporary file, which nobody can plant a file or symlink at in advance. */
export function temporaryBeside(path: string): string {
  return `${path}.${randomBytes(8).toString('hex')}.tmp`
}

/**
 * Creates `path`, which must not exist (EEXIST otherwise, a symlink included),
 * readable and writable only by its owner.
 */
export async function openNewPrivateFile(path: string): Promise<FileHandle> {
  const handle = await open(path, 'wx', OWNER_ONLY)
  try {
    if (process.platform !== 'win32') await handle.chmod(OWNER_ONLY)
    return handle
  } catch (error) {
    await handle.close()
    await unlink(path).catch(() => undefined)
    throw error
  }
}

/**
 * Writes `content` to the new file `path` (as `openNewPrivateFile`) and flushes
 * it to disk; on failure the file is removed again, so a retry is not blocked
 * by an empty or partial one.
 */
export async function writeNewPrivateFile(path: string, content: string | Uint8Array): Promise<void> {
  const handle = await openNewPrivateFile(path)
  try {
    await handle.writeFile(content)
    await handle.sync()
  } catch (error) {
    await handle.close()
    await unlink(path).catch(() => undefined)
    throw error
  }
  await handle.close()
}

/**
 * Replaces `path` so that a crash at any moment leaves the old file or the new
 * one, whole: a new temporary file beside it is written and flushed, renamed
 * over it (replacing a symlink there rather than following it), and the
 * directory flushed.
 */
export async function replacePrivateFile(path: string, content: string | Uint8Array): Promise<void> {
  const temporary = temporaryBeside(path)
  await writeNewPrivateFile(temporary, content)
  await renameOrRemove(temporary, path)
  await syncDirectory(dirname(path))
}

/** Renames `temporary` over `path`; if that fails, removes `temporary`. */
export async function renameOrRemove(temporary: string, path: string): Promise<void> {
  try {
    await rename(temporary, path)
  } catch (error) {
    await unlink(temporary).catch(() => undefined)
    throw error
  }
}

/** Makes a rename in `directory` durable. */
export async function syncDirectory(directory: string): Promise<void> {
  // Windows cannot open a directory for this, and NTFS journals renames.
  if (process.platform === 'win32') return
  const handle = await open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
