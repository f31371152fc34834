/**
 * The benchmarks' child processes and CPU pinning. On a machine with two or
 * more cores, every server (Tessera, each ceiling) runs on CPU 0 and the load
 * generator — the benchmark process itself, with its threads — on CPU 1, so
 * neither steals the other's core and the figures of one run compare with
 * the next.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { resolve } from 'node:path'

export const ROOT = resolve(__dirname, '..')

export const SERVER_CPU = 0
export const LOAD_CPU = 1

export interface Pinning {
  /** Whether servers and the load generator run on separate, fixed cores. */
  pinned: boolean
  /** One line for the report: what was pinned where, or why nothing was. */
  summary: string
}

let pinning: Pinning | undefined

function hasTaskset(): boolean {
  return spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0
}

/** Pins process `pid` (all its threads) to `core`; true when taskset did. */
export function pinToCore(core: number, pid: number): boolean {
  return spawnSync('taskset', ['--all-tasks', '--cpu-list', '--pid', String(core), String(pid)], { stdio: 'ignore' }).status === 0
}

/**
 * Pins this process (all its threads, and so the children it starts unless
 * they are pinned themselves) to LOAD_CPU, once; `BENCH_PIN=0` turns pinning off.
 */
export function pinLoadGenerator(): Pinning {
  if (pinning) return pinning
  const cores = cpus().length
  if (process.env.BENCH_PIN === '0') pinning = { pinned: false, summary: 'not pinned: BENCH_PIN=0' }
  else if (cores < 2) pinning = { pinned: false, summary: `not pinned: ${cores} core (pinning needs two)` }
  else if (!hasTaskset()) pinning = { pinned: false, summary: 'not pinned: `taskset` (util-linux) is not installed' }
  else {
    pinning = pinToCore(LOAD_CPU, process.pid)
      ? { pinned: true, summary: `server pinned to CPU ${SERVER_CPU}, load generator to CPU ${LOAD_CPU} (${cores} cores)` }
      : { pinned: false, summary: 'not pinned: taskset failed' }
  }
  return pinning
}

/** `node <args>`, on the server core when pinning is on. */
export function spawnServer(args: string[], options: Parameters<typeof spawn>[2] = {}): ChildProcess {
  const command = pinLoadGenerator().pinned ? ['taskset', '--cpu-list', String(SERVER_CPU), process.execPath, ...args] : [process.execPath, ...args]
  return spawn(command[0], command.slice(1), { cwd: ROOT, ...options })
}

/** Starts a server child and resolves with its URL once it prints `listening on <url>`. */
export function startServer(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawnServer(args, { env: { ...process.env, TESSERA_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolvePromise, reject) => {
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) resolvePromise({ child, url: match[1] })
    })
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)))
  })
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolvePromise) => {
    child.removeAllListeners('exit')
    child.once('exit', () => resolvePromise())
    child.kill('SIGTERM')
  })
}

/** Runs `tessera <args>` to completion and resolves with its stdout. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['bin/tessera.cjs', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.once('exit', (code) => (code === 0 ? resolvePromise(stdout) : reject(new Error(`tessera ${args.join(' ')} exited with ${code}`))))
  })
}

/** Calls the REST service and parses its JSON answer; throws on any status from 300 up. */
export async function api<T>(url: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(url + path, {
    method,
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

/** Resident memory of a process in bytes (Linux: VmRSS of /proc/<pid>/status), or undefined elsewhere. */
export function residentBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

export function format(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits })
}
