/**
 * What the vault lock, `tessera status`/`stop` and `serve`'s npm watch need to
 * know about other processes: whether one is alive, when it started (to tell
 * a reused process id apart) and who its parent is.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** A process's parent and command line, from /proc on Linux, else from `ps`. */
export interface ProcessInfo {
  ppid: number
  /** Its command line, words separated by spaces. */
  command: string
}

/**
 * Fields of /proc/PID/stat from the third on (state, ppid, …, starttime at
 * index 19): the command name before them may itself hold spaces and parentheses.
 */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

function fromProc(pid: number): ProcessInfo | undefined {
  const fields = procStat(pid)
  if (!fields) return undefined
  let command = ''
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    // Gone between the two reads; the stat fields still describe it.
  }
  return { ppid: Number(fields[1]), command }
}

function fromPs(pid: number): ProcessInfo | undefined {
  try {
    const line = execFileSync('ps', ['-o', 'ppid=,command=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const match = /^(\d+)\s+(.*)$/.exec(line)
    return match ? { ppid: Number(match[1]), command: match[2] } : undefined
  } catch {
    return undefined
  }
}

const hasProc = process.platform === 'linux'

/** The process `pid`, or undefined when it does not exist or cannot be inspected (always on Windows). */
export function processInfo(pid: number): ProcessInfo | undefined {
  if (hasProc) return fromProc(pid)
  return process.platform === 'win32' ? undefined : fromPs(pid)
}

/** The start time of `pid` where the OS tells it cheaply (Linux), else undefined. */
export function processStartTime(pid: number): string | undefined {
  return hasProc ? procStat(pid)?.[19] : undefined
}

/**
 * Whether `pid` is a running process (a zombie is not). With `startTime`
 * (from `processStartTime`), a different process that reuses the id is not
 * taken for the original; where no start time is known, liveness is enough.
 */
export function isProcessRunning(pid: number, startTime?: string): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  if (!hasProc) return true
  const fields = procStat(pid)
  if (!fields || fields[0] === 'Z' || fields[0] === 'X') return false
  return startTime === undefined || fields[19] === startTime
}
