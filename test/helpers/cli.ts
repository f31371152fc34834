/** Runs the `tessera` command as a child process, as other tools drive it. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { join } from 'node:path'

const CLI = join(__dirname, '..', '..', 'bin', 'tessera.cjs')

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface RunningCli {
  child: ChildProcessWithoutNullStreams
  /** Resolves with the first stdout line matching `pattern` (undefined if the process ends first). */
  lineMatching(pattern: RegExp): Promise<string | undefined>
  finished: Promise<CliResult>
}

/** Starts `tessera …` with a clean environment (no inherited key or data dir, silent logs) plus `env`. */
export function startCli(args: string[], env: Record<string, string> = {}): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, TESSERA_MASTER_KEY: '', TESSERA_DATA_DIR: '', TESSERA_CVC_RETENTION: '', TESSERA_LOG_LEVEL: 'silent', ...env }
  })
  let stdout = ''
  let stderr = ''
  let closed = false
  const waiting: Array<{ pattern: RegExp; resolve(line: string | undefined): void }> = []
  /** Settles the waiters whose line has arrived (all of them once the process has ended). */
  const settle = () => {
    for (const waiter of [...waiting]) {
      const line = stdout.split('\n').find((candidate) => waiter.pattern.test(candidate))
      if (line === undefined && !closed) continue
      waiting.splice(waiting.indexOf(waiter), 1)
      waiter.resolve(line)
    }
  }
  child.stdout.on('data', (chunk) => {
    stdout += chunk
    settle()
  })
  child.stderr.on('data', (chunk) => (stderr += chunk))
  // Nothing here should run for long; a hung child must not hang the suite.
  const killer = setTimeout(() => child.kill('SIGKILL'), 90_000)
  const finished = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(killer)
      closed = true
      settle()
      resolve({ code, signal, stdout, stderr })
    })
  })
  return {
    child,
    lineMatching: (pattern) =>
      new Promise((resolve) => {
        waiting.push({ pattern, resolve })
        settle()
      }),
    finished
  }
}

/** Runs `tessera …` to completion. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return startCli(args, env).finished
}
