/**
 * A path the system refuses to resolve at all: too long, a loop of symbolic
 * links, or a file where one of its folders should be. Each command checks its
 * paths before it changes anything, naming the option at fault.
 */
import { lstat } from 'node:fs/promises'
import { CliError, type ExitName } from './exit-codes'

const PROBLEMS: Record<string, [why: string, fix: string]> = {
  ENAMETOOLONG: ['the path, or a name in it, is too long', 'a shorter path (a file or folder name holds at most 255 bytes)'],
  ELOOP: ['its symbolic links loop', 'a path whose symbolic links lead somewhere'],
  ENOTDIR: ['a file is in the way of one of its folders', 'a path whose folders are folders']
}

/** Why a file that is not a regular one is refused: a device or a pipe could be read forever, or be gone once renamed over. */
export const NOT_A_REGULAR_FILE = 'it is not a regular file (a device, a pipe or a socket)'

/** `path` for a message: a very long one shortened to its start and end. */
export function shownPath(path: string): string {
  return path.length <= 200 ? path : `${path.slice(0, 80)}…${path.slice(-80)} (${path.length} characters)`
}

/** Why and how to fix it, when `error` says a path cannot be resolved at all; undefined for any other error. */
export function unresolvablePath(error: unknown): { why: string; fix: string } | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (typeof code !== 'string' || !Object.hasOwn(PROBLEMS, code)) return undefined
  const [why, fix] = PROBLEMS[code]
  return { why, fix }
}

/**
 * The failure to report when `error` says `path`, given with `option`, cannot
 * be resolved; undefined for any other error.
 */
export function pathProblem(error: unknown, path: string, option: string, exit: ExitName = 'USAGE'): CliError | undefined {
  const problem = unresolvablePath(error)
  return problem && new CliError(exit, `Cannot use ${shownPath(path)}: ${problem.why}.`, `give ${option} ${problem.fix}.`)
}

/**
 * Whether anything is at `path`: a file, a folder, or a symbolic link even one
 * that leads nowhere. A path that cannot be resolved is refused naming `option`.
 */
export async function somethingAt(path: string, option: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false
      throw pathProblem(error, path, option) ?? error
    }
  )
}
