/** The `tessera` command as a child process, as other tools run it. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { join } from 'node:path'

const CLI = join(__dirname, '..', '..', 'bin', 'tessera.cjs')

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

export interface RunningCli {
  child: ChildProcessWithoutNullStreams
  finished: Promise<CliResult>
}

/** Starts the CLI with a clean environment plus `env`; it is killed if it runs 60 s. */
export function startCli(args: string[], env: Record<string, string> = {}): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, TESSERA_MASTER_KEY: '', TESSERA_DATA_DIR: '', TESSERA_LOG_LEVEL: 'silent', ...env }
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const finished = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(killer)
      resolve({ code, stdout, stderr })
    })
  })
  return { child, finished }
}

export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return startCli(args, env).finished
}

/** Starts `tessera serve --port 0` and resolves with its URL once it listens. */
export async function serveCli(dataDir: string, env: Record<string, string> = {}): Promise<RunningCli & { url: string }> {
  const running = startCli(['serve', '--data-dir', dataDir, '--port', '0'], env)
  const url = await new Promise<string>((resolve, reject) => {
    let seen = ''
    running.child.stdout.on('data', (chunk) => {
      seen += chunk
      const match = /Tessera listening on (\S+)\n/.exec(seen)
      if (match) resolve(match[1])
    })
    running.finished.then((result) => reject(new Error(`serve exited: ${JSON.stringify(result)}`)))
  })
  return { ...running, url }
}
