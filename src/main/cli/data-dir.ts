/**
 * The checks every command makes on the data directory before it opens
 * anything, so a wrong path or mode is reported as such rather than as a
 * database error.
 */
import type { Stats } from 'node:fs'
import { access, constants, mkdir, stat } from 'node:fs/promises'
import { CliError } from './exit-codes'

const notADirectory = (dir: string) => new CliError('DATA_DIR', `The data directory ${dir} is not a directory.`, 'point --data-dir (or TESSERA_DATA_DIR) at a directory.')

/**
 * POSIX: another user who may write the directory (or owns it) could plant a
 * file or symlink where Tessera writes its keys and lock record, or replace
 * them, so the directory must belong to this user and be writable by no one else.
 */
function requirePrivateDirectory(dir: string, stats: Stats): void {
  const uid = process.getuid?.()
  if (process.platform === 'win32' || uid === undefined) return
  if (stats.uid !== uid) {
    throw new CliError('DATA_DIR', `The data directory ${dir} belongs to another user (uid ${stats.uid}).`, 'run Tessera as the owner of the data directory, or use a directory this user owns.')
  }
  if ((stats.mode & 0o022) !== 0) {
    const mode = (stats.mode & 0o777).toString(8).padStart(4, '0')
    throw new CliError('DATA_DIR', `The data directory ${dir} is writable by other users (mode ${mode}).`, `make it private to its owner: chmod 700 ${dir}`)
  }
}

/**
 * Checks that `dir` is a directory this user may read (and write), owned by
 * this user and writable by no one else.
 * @throws CliError (DATA_DIR, PERMISSION_DENIED)
 */
export async function requireDataDir(dir: string, needs: 'read' | 'write'): Promise<void> {
  const stats = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') {
      throw new CliError('DATA_DIR', `The data directory ${dir} does not exist.`, `create a vault there with \`tessera init --data-dir ${dir}\`, or point --data-dir (or TESSERA_DATA_DIR) at an existing one.`)
    }
    throw error.code === 'ENOTDIR' ? notADirectory(dir) : error
  })
  if (!stats.isDirectory()) throw notADirectory(dir)
  try {
    await access(dir, needs === 'write' ? constants.R_OK | constants.W_OK | constants.X_OK : constants.R_OK | constants.X_OK)
  } catch {
    throw new CliError(
      'PERMISSION_DENIED',
      `Permission denied on the data directory ${dir}.`,
      `Tessera must be able to ${needs === 'write' ? 'read and write' : 'read'} it: run as its owner, or fix its owner or mode.`
    )
  }
  requirePrivateDirectory(dir, stats)
}

/** `init`: creates `dir` (mode 0700, parents included) unless it exists, then checks it (an existing one must be private too). */
export async function prepareDataDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST' || code === 'ENOTDIR') throw notADirectory(dir)
    throw error
  }
  await requireDataDir(dir, 'write')
}
