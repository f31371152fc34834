/**
 * Drives the `tessera` command as other tools do: a child process, its
 * stdout, stderr, exit code and signals.
 */
import { spawn, type ChildProcessWithoutNullStreams, type SpawnOptionsWithoutStdio } from 'node:child_process'
import { join } from 'node:path'

export const CLI = join(__dirname, '..', '..', 'bin', 'tessera.cjs')
/** The line `serve` prints once it listens: its URL (http, or https with TLS) and port. */
export const LISTENING = /^Tessera listening on (https?:\/\/(?:[\d.]+|\[[\da-f:]+\]):(\d+))\n$/

/** Variables that would leak in from the developer's shell, cleared for every run (an empty variable counts as unset). */
const CLEAN_ENV = {
  TESSERA_MASTER_KEY: '',
  TESSERA_DATA_DIR: '',
  TESSERA_HOST: '',
  TESSERA_PORT: '',
  TESSERA_ALLOWED_HOSTS: '',
  TESSERA_TLS_CERT: '',
  TESSERA_TLS_KEY: '',
  TESSERA_TRUSTED_PROXIES: '',
  TESSERA_CVC_RETENTION: '',
  TESSERA_WEBHOOK_ALLOWED_HOSTS: '',
  TESSERA_WEBHOOK_RETRY_BASE_MS: '',
  TESSERA_LOG_LEVEL: 'silent',
  npm_command: '',
  npm_lifecycle_event: ''
}

export interface Finished {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** A running CLI process; `finished` settles when it exits and its output is drained. */
export interface Running {
  child: ChildProcessWithoutNullStreams
  output(): { stdout: string; stderr: string }
  /** Resolves with the first stdout line, or '' if the process ends first (it is killed once it outlives its lifetime). */
  firstLine: Promise<string>
  /** Resolves with the first stdout line matching `pattern`, or undefined if the process ends first. */
  lineMatching(pattern: RegExp): Promise<string | undefined>
  finished: Promise<Finished>
}

/** How long a command may run before it is killed (a hung command must not hang the suite). */
const COMMAND_LIFETIME_MS = 90_000
/** A server lives as long as its suite, which on a loaded machine can be minutes; the suite terminates it. */
const SERVER_LIFETIME_MS = 600_000

/** Spawns `command args…` and collects its output; kills it once it has run `lifetimeMs`. */
export function track(command: string, args: string[], env: Record<string, string> = {}, options: SpawnOptionsWithoutStdio = {}, lifetimeMs = COMMAND_LIFETIME_MS): Running {
  const child = spawn(command, args, { ...options, env: { ...process.env, ...CLEAN_ENV, ...env } })
  let stdout = ''
  let stderr = ''
  let closed = false
  const waiters: Array<{ pattern: RegExp; resolve(line: string | undefined): void }> = []
  /** Settles the waiters whose line has arrived (all of them once the process has ended). */
  const settle = () => {
    const lines = stdout.split('\n')
    if (!closed) lines.pop() // an incomplete line
    for (const waiter of [...waiters]) {
      const line = lines.find((candidate) => waiter.pattern.test(candidate))
      if (line === undefined && !closed) continue
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(line)
    }
  }
  const lineMatching = (pattern: RegExp) =>
    new Promise<string | undefined>((resolve) => {
      waiters.push({ pattern, resolve })
      settle()
    })
  const firstLine = lineMatching(/^/).then((line) => (line === undefined || !stdout.includes('\n') ? '' : line + '\n'))
  child.stdout.on('data', (chunk) => {
    stdout += chunk
    settle()
  })
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const killer = setTimeout(() => child.kill('SIGKILL'), lifetimeMs)
  const finished = new Promise<Finished>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(killer)
      closed = true
      settle()
      resolve({ code, signal, stdout, stderr })
    })
  })
  return { child, output: () => ({ stdout, stderr }), firstLine, lineMatching, finished }
}

/** Starts `tessera args…`. */
export function start(args: string[], env: Record<string, string> = {}, options: SpawnOptionsWithoutStdio = {}, lifetimeMs?: number): Running {
  return track(process.execPath, [CLI, ...args], env, options, lifetimeMs)
}

/** Runs `tessera args…` to its end. */
export function run(args: string[], env: Record<string, string> = {}, options: SpawnOptionsWithoutStdio = {}): Promise<Finished> {
  return start(args, env, options).finished
}

export interface Served extends Running {
  url: string
  port: number
}

/** Checks that `running` printed the "listening" line and returns its URL. */
export async function listening(running: Running): Promise<Served> {
  const line = await running.firstLine
  const match = LISTENING.exec(line)
  if (!match) {
    running.child.kill('SIGKILL')
    throw new Error(`serve did not start: ${JSON.stringify({ line, ...running.output() })}`)
  }
  return { ...running, url: match[1], port: Number(match[2]) }
}

/** Starts `serve` on a free port (with `args` after) and waits for its "listening" line. */
export function serve(dataDir: string, env: Record<string, string> = {}, args: string[] = []): Promise<Served> {
  return listening(start(['serve', '--data-dir', dataDir, '--port', '0', ...args], env, {}, SERVER_LIFETIME_MS))
}

/** Stops a server with SIGTERM and returns how it ended. */
export async function terminate(server: Running): Promise<Finished> {
  server.child.kill('SIGTERM')
  return server.finished
}
