/**
 * The headless CLI contract (DESIGN §9), driven as other tools drive it: a
 * child process, its stdout, stderr, exit code and signals.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MANAGEMENT_PERMISSIONS } from '../../src/shared/permissions'

const CLI = join(__dirname, '..', '..', 'bin', 'tessera.cjs')
const LISTENING = /^Tessera listening on (http:\/\/127\.0\.0\.1:(\d+))\n$/

interface Finished {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** A running CLI process; `finished` settles when it exits and its output is drained. */
interface Running {
  child: ChildProcessWithoutNullStreams
  output(): { stdout: string; stderr: string }
  /** Resolves with the first stdout line (the process is killed if it runs 45 s). */
  firstLine: Promise<string>
  finished: Promise<Finished>
}

function start(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, TESSERA_MASTER_KEY: '', TESSERA_DATA_DIR: '', TESSERA_LOG_LEVEL: 'silent', ...env }
  })
  let stdout = ''
  let stderr = ''
  let onLine: (line: string) => void = () => undefined
  const firstLine = new Promise<string>((resolve) => (onLine = resolve))
  child.stdout.on('data', (chunk) => {
    stdout += chunk
    if (stdout.includes('\n')) onLine(stdout.slice(0, stdout.indexOf('\n') + 1))
  })
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const killer = setTimeout(() => child.kill('SIGKILL'), 45_000)
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

function run(args: string[], env: Record<string, string> = {}): Promise<Finished> {
  return start(args, env).finished
}

/** Starts `serve` and waits for its "listening" line. */
async function serve(dataDir: string, env: Record<string, string> = {}) {
  const running = start(['serve', '--data-dir', dataDir, '--port', '0'], env)
  const line = await running.firstLine
  const match = LISTENING.exec(line)
  if (!match) {
    running.child.kill('SIGKILL')
    throw new Error(`serve did not start: ${JSON.stringify({ line, ...running.output() })}`)
  }
  return { ...running, url: match[1], port: Number(match[2]) }
}

// Each case spawns Node with tsx; on two busy cores that takes a few seconds.
describe('tessera CLI', { timeout: 60_000 }, () => {
  let root: string
  /** A vault initialised once by `init --json`, shared by the serve tests. */
  let dataDir: string
  let init: Finished
  let initialised: any

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-cli-'))
    dataDir = join(root, 'vault')
    init = await run(['init', '--data-dir', dataDir, '--json', '--tenant-name', 'CLI tenant', '--owner-email', 'owner@example.com'])
    initialised = JSON.parse(init.stdout)
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  describe('init', () => {
    it('prints exactly one JSON object with tenant_id, data_dir and the management application', () => {
      expect(init.code).toBe(0)
      expect(init.stdout.endsWith('\n')).toBe(true)
      expect(init.stdout.trim().split('\n')).toHaveLength(1)
      expect(initialised).toEqual({
        tenant_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        data_dir: dataDir,
        application: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          name: expect.any(String),
          type: 'management',
          key: expect.stringMatching(/^key_management_/),
          permissions: [...MANAGEMENT_PERMISSIONS]
        }
      })
    })

    it('creates the data dir 0700, and the master key file and database 0600', async () => {
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700)
      expect((await stat(join(dataDir, 'master.key'))).mode & 0o777).toBe(0o600)
      expect((await stat(join(dataDir, 'tessera.db'))).mode & 0o777).toBe(0o600)
    })

    it('refuses an initialised dir with exit code 1 and a clear message, changing nothing', async () => {
      const masterKey = await readFile(join(dataDir, 'master.key'))
      const again = await run(['init', '--data-dir', dataDir, '--json'])
      expect(again.code).toBe(1)
      expect(again.stdout).toBe('')
      expect(again.stderr).toMatch(/already exists/)
      expect(again.stderr).toContain(dataDir)
      expect(await readFile(join(dataDir, 'master.key'))).toEqual(masterKey)
    })

    it('prints the key once in plain text without --json', async () => {
      const dir = join(root, 'plain')
      const result = await run(['init', '--data-dir', dir])
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/key_management_\S+/)
      expect(() => JSON.parse(result.stdout)).toThrow()
    })

    it('uses TESSERA_DATA_DIR when --data-dir is absent', async () => {
      const dir = join(root, 'from-env')
      const result = await run(['init', '--json'], { TESSERA_DATA_DIR: dir })
      expect(result.code).toBe(0)
      expect(JSON.parse(result.stdout).data_dir).toBe(dir)
    })

    it('rejects an unknown option with exit code 1', async () => {
      const result = await run(['init', '--data-dir', join(root, 'unused'), '--colour'])
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/colour/)
    })
  })

  describe('serve', () => {
    it('prints "Tessera listening on http://127.0.0.1:PORT" with the real port, answers /health, and exits 0 on SIGTERM', async () => {
      const server = await serve(dataDir)
      expect(server.port).toBeGreaterThan(0)
      const health = await fetch(`${server.url}/health`)
      expect(health.status).toBe(200)
      expect(await health.json()).toEqual({ status: 'ok' })
      const self = await fetch(`${server.url}/applications/key`, { headers: { 'svc-api-key': initialised.application.key } })
      expect(self.status).toBe(200)
      expect(((await self.json()) as { id: string }).id).toBe(initialised.application.id)
      server.child.kill('SIGTERM')
      const result = await server.finished
      expect(result.code).toBe(0)
      expect(result.stdout).toBe(`Tessera listening on ${server.url}\n`)
    })

    it('exits 0 on SIGINT', async () => {
      const server = await serve(dataDir)
      server.child.kill('SIGINT')
      expect((await server.finished).code).toBe(0)
    })

    it('finishes an in-flight request before exiting on SIGTERM', async () => {
      const server = await serve(dataDir)
      const app = await fetch(`${server.url}/applications`, {
        method: 'POST',
        headers: { 'svc-api-key': initialised.application.key, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'In flight', type: 'private', permissions: ['token:create', 'token:read'] })
      }).then((response) => response.json() as Promise<{ key: string }>)

      const body = JSON.stringify({ id: 'in-flight-token', type: 'token', data: 'sent after SIGTERM' })
      const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${server.url}/tokens`, {
          method: 'POST',
          headers: { 'svc-api-key': app.key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' }
        })
        // 100 Continue means the server has the request in hand: signal it, then send the body.
        req.on('continue', () => {
          server.child.kill('SIGTERM')
          req.end(body)
        })
        req.on('response', (res) => {
          let text = ''
          res.on('data', (chunk) => (text += chunk))
          res.on('end', () => resolve({ status: res.statusCode!, body: text }))
        })
        req.on('error', reject)
        req.flushHeaders()
      })
      const answered = await response
      expect(answered.status).toBe(201)
      expect(JSON.parse(answered.body).id).toBe('in-flight-token')
      expect((await server.finished).code).toBe(0)

      // The token was committed before the process exited.
      const again = await serve(dataDir)
      const read = await fetch(`${again.url}/tokens/in-flight-token`, { headers: { 'svc-api-key': app.key } })
      expect(read.status).toBe(200)
      again.child.kill('SIGTERM')
      expect((await again.finished).code).toBe(0)
    })

    it('stops accepting connections once shutting down', async () => {
      const server = await serve(dataDir)
      server.child.kill('SIGTERM')
      await server.finished
      await expect(fetch(`${server.url}/health`)).rejects.toThrow()
    })

    it('exits 1 with a clear message for an uninitialised dir', async () => {
      const result = await run(['serve', '--data-dir', join(root, 'empty'), '--port', '0'])
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/Cannot unlock vault/)
      expect(result.stderr).toMatch(/tessera init/)
    })

    it('exits 1 for a bad port', async () => {
      const result = await run(['serve', '--data-dir', dataDir, '--port', 'abc'])
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/--port/)
    })

    it('exits 1 naming TESSERA_SESSION_MAX_TTL when it is malformed', async () => {
      const result = await run(['serve', '--data-dir', dataDir, '--port', '0'], { TESSERA_SESSION_MAX_TTL: '2999y' })
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/TESSERA_SESSION_MAX_TTL must be a duration/)
    })
  })

  it('exits 1 with the usage for an unknown command', async () => {
    const result = await run(['frobnicate'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/Unknown command/)
    expect(result.stderr).toMatch(/Usage: tessera/)
  })
})
