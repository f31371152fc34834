/**
 * Drives the `tessera` command as other tools do: a child process, its
 * stdout, stderr, exit code and signals.
 */
import { spawn, type ChildProcessWithoutNullStreams, type SpawnOptionsWithoutStdio } from 'node:child_process'
import { join } from 'node:path'

export const CLI = join(__dirname, '..', '..', 'bin', 'tessera.cjs')
export const LISTENING = /^Tessera listening on (http:\/\/127\.0\.0\.1:(\d+))\n$/

/** Variables that would leak in from the developer's shell, cleared for every run (an empty variable counts as unset). */
const CLEAN_ENV = {
  TESSERA_MASTER_KEY: '',
  TESSERA_DATA_DIR: '',
  TESSERA_HOST: '',
  TESSERA_PORT: '',
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
  /** Resolves with the first stdout line, or '' if the process ends first (it is killed if it runs 60 s). */
  firstLine: Promise<string>
  finished: Promise<Finished>
}

/** Spawns `command args…` and collects its output. */
export function track(command: string, args: string[], env: Record<string, string> = {}, options: SpawnOptionsWithoutStdio = {}): Running {
  const child = spawn(command, args, { ...options, env: { ...process.env, ...CLEAN_ENV, ...env } })
  let stdout = ''
  let stderr = ''
  let onLine: (line: string) => void = () => undefined
  const firstLine = new Promise<string>((resolve) => (onLine = resolve))
  child.stdout.on('data', (chunk) => {
    stdout += chunk
    if (stdout.includes('\n')) onLine(stdout.slice(0, stdout.indexOf('\n') + 1))
  })
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const finished = new Promise<Finished>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(killer)
      onLine('')
      resolve({ code, signal, stdout, stderr })
    })
  })
  return { child, output: () => ({ stdout, stderr }), firstLine, finished }
}

/** Starts `tessera args…`. */
export function start(args: string[], env: Record<string, string> = {}, options: SpawnOptionsWithoutStdio = {}): Running {
  return track(process.execPath, [CLI, ...args], env, options)
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

/** Starts `serve` on a free port and waits for its "listening" line. */
export function serve(dataDir: string, env: Record<string, string> = {}): Promise<Served> {
  return listening(start(['serve', '--data-dir', dataDir, '--port', '0'], env))
}

/** Stops a server with SIGTERM and returns how it ended. */
export async function terminate(server: Running): Promise<Finished> {
  server.child.kill('SIGTERM')
  return server.finished
}
