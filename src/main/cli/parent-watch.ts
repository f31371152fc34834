/**
 * npm's wrappers (`npx`, `npm exec`, `npm run`) run a command through
 * `sh -c` and do not pass SIGTERM on: killing the wrapper leaves the server
 * running, orphaned, with nothing left to stop it. So when `tessera serve` was
 * started through npm, it finds that npm process among its ancestors and
 * stops gracefully once it is gone. Only then: a server started any other way
 * (a service manager, `nohup`, a shell's `&`) keeps running when its parent
 * exits, as daemons do.
 */
import { isProcessRunning, processInfo, processStartTime } from '../infra/processes'

/** npm sets these in the environment of everything it runs. */
export function startedThroughNpm(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.npm_command || env.npm_lifecycle_event)
}

/** npm's own process shows as `npm exec …` (its title), or as node running npm-cli.js / npx-cli.js. */
const NPM_COMMAND = /^(\S*[\\/])?np[mx](\s|$)|[\\/]np[mx]-cli\.js(\s|$)/

/** Levels of ancestry searched: npm, then `sh -c`, then this process, give or take a wrapper script. */
const MAX_DEPTH = 4

/** The npm process this one runs under, else the parent (also where ancestry cannot be read, as on Windows). */
export function npmAncestor(): number {
  let pid = process.ppid
  for (let depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
    const info = processInfo(pid)
    if (!info) break
    if (NPM_COMMAND.test(info.command)) return pid
    pid = info.ppid
  }
  return process.ppid
}

/**
 * Calls `onGone` once process `pid` has exited, or this process got another
 * parent (its own was killed). Checks every `intervalMs`; the timer does not
 * keep the process alive.
 */
export function watchProcess(pid: number, onGone: () => void, intervalMs = 1000): void {
  const startTime = processStartTime(pid)
  const parent = process.ppid
  const timer = setInterval(() => {
    if (isProcessRunning(pid, startTime) && process.ppid === parent) return
    clearInterval(timer)
    onGone()
  }, intervalMs)
  timer.unref()
}
