/**
 * The rule for the data directory, which holds the master key and the lock
 * record, shared by the CLI and the desktop app: on POSIX, another user who
 * may write the directory (or owns it) could plant a file or symlink where
 * Tessera writes its keys and lock record, or replace them, so the directory
 * must belong to this user and be writable by no one else.
 */
import type { Stats } from 'node:fs'

/** Why a directory is not private, and what to do about it. */
export interface DirectoryProblem {
  message: string
  hint: string
}

/**
 * What is wrong with the data directory `dir` (whose `stat` is `stats`) under
 * the rule above; undefined when it is private (and always on Windows, where
 * the rule does not apply).
 */
export function privateDirectoryProblem(dir: string, stats: Pick<Stats, 'uid' | 'mode'>): DirectoryProblem | undefined {
  const uid = process.getuid?.()
  if (process.platform === 'win32' || uid === undefined) return undefined
  if (stats.uid !== uid) {
    return {
      message: `The data directory ${dir} belongs to another user (uid ${stats.uid}).`,
      hint: 'run Tessera as the owner of the data directory, or use a directory this user owns.'
    }
  }
  if ((stats.mode & 0o022) !== 0) {
    const mode = (stats.mode & 0o777).toString(8).padStart(4, '0')
    return { message: `The data directory ${dir} is writable by other users (mode ${mode}).`, hint: `make it private to its owner: chmod 700 ${dir}` }
  }
  return undefined
}
