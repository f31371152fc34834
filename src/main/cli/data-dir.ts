/**
 * The checks every command makes on the data directory before it opens
 * anything, so a wrong path or mode is reported as such rather than as a
 * database error.
 */
import type { Stats } from 'node:fs'
import { access, constants, mkdir, rmdir, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { privateDirectoryProblem } from '../infra/private-directory'
import { CliError } from './exit-codes'
import { pathProblem } from './path-problems'

const notADirectory = (dir: string) => new CliError('DATA_DIR', `The data directory ${dir} is not a directory.`, 'point --data-dir (or TESSERA_DATA_DIR) at a directory.')

/** The shared rule (infra/private-directory) as the CLI's DATA_DIR error. */
function requirePrivateDirectory(dir: string, stats: Stats): void {
  const problem = privateDirectoryProblem(dir, stats)
  if (problem) throw new CliError('DATA_DIR', problem.message, problem.hint)
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
    throw error.code === 'ENOTDIR' ? notADirectory(dir) : (pathProblem(error, dir, '--data-dir (or TESSERA_DATA_DIR)', 'DATA_DIR') ?? error)
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

/**
 * `init`: creates `dir` (mode 0700, parents included) unless it exists, then checks it (an existing one
 * must be private too). Returns the first directory it created, if any, for `removeCreatedDataDir`.
 */
export async function prepareDataDir(dir: string): Promise<string | undefined> {
  let created: string | undefined
  try {
    created = await mkdir(dir, { recursive: true, mode: 0o700 })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST' || code === 'ENOTDIR') throw notADirectory(dir)
    throw pathProblem(error, dir, '--data-dir (or TESSERA_DATA_DIR)', 'DATA_DIR') ?? error
  }
  await requireDataDir(dir, 'write')
  return created
}

/**
 * After a failed `init`: removes the directories `prepareDataDir` created, from `dir` up to `created`,
 * while they are empty. One that holds anything (a master key kept for the next attempt, another
 * init's lock) stays, and so do its parents.
 */
export async function removeCreatedDataDir(dir: string, created: string): Promise<void> {
  for (let current = resolve(dir); ; current = dirname(current)) {
    if (!(await rmdir(current).then(() => true, () => false))) return
    if (current === resolve(created) || dirname(current) === current) return
  }
}
