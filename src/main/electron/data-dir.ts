/**
 * The desktop's first step in its data folder, before the app writes or opens
 * anything there (the single-instance lock Electron keeps there, the key
 * store, settings, the vault): create it if missing (0700), then hold it
 * to the rule the CLI applies (infra/private-directory). A folder that breaks
 * it is refused with an error box naming the folder, the reason and the fix,
 * and the app exits with a failure code without having opened or written
 * anything in it.
 */
import { mkdirSync, statSync } from 'node:fs'
import { app, dialog } from 'electron'
import type { Logger } from '../infra/logger'
import { privateDirectoryProblem, type DirectoryProblem } from '../infra/private-directory'

export const DATA_DIR_ERROR_TITLE = 'Tessera cannot use its data folder'

/** The exit code of a refused data folder: the one `tessera` gives for it, so scripts that start either read it alike. */
export const DATA_DIR_REFUSED_EXIT_CODE = 8

const notADirectory = (dir: string): DirectoryProblem => ({
  message: `The data directory ${dir} is not a directory.`,
  hint: 'point TESSERA_DATA_DIR at a directory, or unset it to use the OS app-data folder.'
})

function dataDirProblem(dir: string): DirectoryProblem | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const stats = statSync(dir)
    if (!stats.isDirectory()) return notADirectory(dir)
    return privateDirectoryProblem(dir, stats)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST' || code === 'ENOTDIR') return notADirectory(dir)
    return {
      message: `The data directory ${dir} cannot be created or opened (${code ?? (error as Error).message}).`,
      hint: 'check its path and permissions, or point TESSERA_DATA_DIR at a directory this user owns.'
    }
  }
}

/**
 * Prepares the data folder `dir`; true when the app may open it. Otherwise
 * shows why in an error box, exits with DATA_DIR_REFUSED_EXIT_CODE, and
 * returns false. Synchronous, so that it can run before `app` is ready
 * (the error box may be shown then) without letting the ready event pass.
 */
export function openDataDir(dir: string, logger: Logger): boolean {
  const problem = dataDirProblem(dir)
  if (!problem) return true
  logger.error({ dataDir: dir, problem: problem.message }, 'data directory refused')
  dialog.showErrorBox(
    DATA_DIR_ERROR_TITLE,
    `${problem.message}\n\n` +
      'Tessera keeps its master key in this folder, so it must belong to you and be writable by no one else: ' +
      'another user could otherwise plant or replace files there. Nothing was opened or written in it.\n\n' +
      `To fix it, ${problem.hint}`
  )
  // Nothing is open yet, so there is nothing for a graceful quit to close; quitting would exit with 0.
  app.exit(DATA_DIR_REFUSED_EXIT_CODE)
  return false
}
