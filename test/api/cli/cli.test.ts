/**
 * The headless CLI contract, driven as other tools drive it: a
 * child process, its stdout, stderr, exit code and signals.
 */
import { request as httpRequest } from 'node:http'
import { createServer } from 'node:net'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MANAGEMENT_PERMISSIONS } from '../../../src/shared/permissions'
import { run, serve, terminate, type Finished } from '../../helpers/cli'

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

    it('refuses an initialised dir with exit code 4 and a clear message, changing nothing', async () => {
      const masterKey = await readFile(join(dataDir, 'master.key'))
      const again = await run(['init', '--data-dir', dataDir, '--json'])
      expect(again.code).toBe(4)
      expect(again.stdout).toBe('')
      expect(again.stderr).toMatch(/^tessera init: A vault already exists in /)
      expect(again.stderr).toContain(dataDir)
      expect(again.stderr).toMatch(/\nhint: .*--data-dir/)
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

    it('rejects an unknown option with exit code 2 and the usage on stderr, creating nothing', async () => {
      const result = await run(['init', '--data-dir', join(root, 'unused'), '--colour'])
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(/^tessera init: Unknown option --colour\.\n/)
      expect(result.stderr).toContain('Usage: tessera init [--data-dir DIR]')
      expect(existsSync(join(root, 'unused'))).toBe(false)
    })

    it('refuses a malformed --owner-email with exit code 2 naming the option, creating nothing', async () => {
      for (const email of ['not-an-email', 'Ada <ada@example.com>']) {
        const dir = join(root, 'bad-email')
        const result = await run(['init', '--data-dir', dir, '--owner-email', email, '--json'])
        expect(result.code, email).toBe(2)
        expect(result.stdout).toBe('')
        expect(result.stderr).toContain(`tessera init: --owner-email must be a well-formed e-mail address (RFC 5322), such as ada@example.com (got ${JSON.stringify(email)}).`)
        expect(existsSync(dir)).toBe(false)
      }
    })

    it('refuses an empty --tenant-name with exit code 2', async () => {
      const result = await run(['init', '--data-dir', join(root, 'no-name'), '--tenant-name', ' '])
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/--tenant-name must not be empty/)
      expect(existsSync(join(root, 'no-name'))).toBe(false)
    })

    it('refuses a data dir that is a file with exit code 8', async () => {
      const file = join(root, 'a-file')
      await writeFile(file, 'not a directory')
      const result = await run(['init', '--data-dir', file])
      expect(result.code).toBe(8)
      expect(result.stderr).toMatch(/is not a directory/)
      expect(await readFile(file, 'utf8')).toBe('not a directory')
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

    it('exits 8 for a data dir that does not exist, and 3 for one without a vault, pointing at init', async () => {
      const missing = await run(['serve', '--data-dir', join(root, 'missing'), '--port', '0'])
      expect(missing.code).toBe(8)
      expect(missing.stderr).toContain(`tessera serve: The data directory ${join(root, 'missing')} does not exist.`)
      expect(missing.stderr).toContain(`hint: create a vault there with \`tessera init --data-dir ${join(root, 'missing')}\``)

      const empty = join(root, 'empty')
      await mkdir(empty, { mode: 0o700 })
      const uninitialised = await run(['serve', '--data-dir', empty, '--port', '0'])
      expect(uninitialised.code).toBe(3)
      expect(uninitialised.stderr).toContain(`tessera serve: No vault in ${empty}.`)
      expect(uninitialised.stderr).toMatch(/hint: create one with `tessera init --data-dir /)
      expect(await readdir(empty)).toEqual([])
    })

    it('exits 3 naming both fixes when the master key is missing', async () => {
      const dir = join(root, 'keyless')
      expect((await run(['init', '--data-dir', dir, '--json'])).code).toBe(0)
      await rm(join(dir, 'master.key'))
      const result = await run(['serve', '--data-dir', dir, '--port', '0'])
      expect(result.code).toBe(3)
      expect(result.stderr).toMatch(/Cannot unlock vault: no master key/)
      expect(result.stderr).toMatch(/hint: set TESSERA_MASTER_KEY .* or put its master\.key file back/)
    })

    it('exits 3 for a master key that is not this vault\'s, and 2 for a malformed TESSERA_MASTER_KEY without echoing it', async () => {
      const wrong = await run(['serve', '--data-dir', dataDir, '--port', '0'], { TESSERA_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') })
      expect(wrong.code).toBe(3)
      expect(wrong.stderr).toMatch(/the master key does not match this vault/)
      const malformed = await run(['serve', '--data-dir', dataDir, '--port', '0'], { TESSERA_MASTER_KEY: 'c2VjcmV0LXNob3J0' })
      expect(malformed.code).toBe(2)
      expect(malformed.stderr).toMatch(/^tessera serve: TESSERA_MASTER_KEY must be the base64 encoding of 32 bytes/)
      expect(malformed.stderr).not.toContain('c2VjcmV0LXNob3J0')
    })

    it('exits 2 for a bad --port or --host, or a host this machine does not have, naming where it came from', async () => {
      const port = await run(['serve', '--data-dir', dataDir, '--port', 'abc'])
      expect(port.code).toBe(2)
      expect(port.stderr).toMatch(/^tessera serve: --port must be a port number from 0 to 65535 \(got "abc"\)\./)
      const high = await run(['serve', '--data-dir', dataDir, '--port', '65536'])
      expect(high.code).toBe(2)
      expect(high.stderr).toMatch(/--port must be a port number/)
      const host = await run(['serve', '--data-dir', dataDir, '--host', 'not a host!', '--port', '0'])
      expect(host.code).toBe(2)
      expect(host.stderr).toMatch(/^tessera serve: --host must be an IP address or a host name/)
      // Safe to expose (behind a proxy, with allowed hosts), but not an address of this machine.
      const foreign = await run(['serve', '--data-dir', dataDir, '--port', '0', '--trust-proxy', '127.0.0.1', '--allowed-hosts', 'vault.example.com'], { TESSERA_HOST: '192.0.2.1' })
      expect(foreign.code).toBe(2)
      expect(foreign.stderr).toMatch(/^tessera serve: TESSERA_HOST 192\.0\.2\.1 is not an address of this machine\./)
      const missingValue = await run(['serve', '--data-dir', dataDir, '--port'])
      expect(missingValue.code).toBe(2)
      expect(missingValue.stderr).toMatch(/--port needs a value \(PORT\)/)
    })

    it('exits 2 for every malformed TESSERA_* variable, naming the variable, before opening anything', async () => {
      const bad: Record<string, string> = {
        TESSERA_PORT: 'abc',
        TESSERA_HOST: 'bad host',
        TESSERA_BODY_LIMIT: 'abc',
        TESSERA_LOG_LEVEL: 'loud',
        TESSERA_ALLOWED_HOSTS: 'vault.example.com,has space',
        TESSERA_CORS_ORIGINS: 'https://shop.example.com/path',
        TESSERA_SMTP_HOST: 'smtp example',
        TESSERA_SMTP_PORT: '0',
        TESSERA_SMTP_SECURE: 'maybe',
        TESSERA_SMTP_REQUIRE_TLS: 'sometimes',
        TESSERA_SMTP_FROM: 'not an address',
        TESSERA_PUBLIC_URL: 'ftp://vault.example.com'
      }
      // Against a vault in use: a command that got past validation would say so instead.
      const server = await serve(dataDir)
      try {
        const results = await Promise.all(Object.entries(bad).map(([name, value]) => run(['serve', '--data-dir', dataDir, '--port', '0'], { [name]: value })))
        Object.keys(bad).forEach((name, i) => {
          expect(results[i].code, name).toBe(2)
          expect(results[i].stderr, name).toMatch(new RegExp(`^tessera serve: ${name} must `))
          expect(results[i].stderr, name).toContain(`hint: correct or unset ${name}`)
          expect(results[i].stderr, name).not.toMatch(/\n\s+at /)
        })
      } finally {
        expect((await terminate(server)).code).toBe(0)
      }
    })

    it('reports a port in use with exit code 6, naming the address and both fixes', async () => {
      const blocker = createServer()
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
      const { port } = blocker.address() as { port: number }
      try {
        const result = await run(['serve', '--data-dir', dataDir, '--port', String(port)])
        expect(result.code).toBe(6)
        expect(result.stderr).toContain(`tessera serve: Cannot listen on 127.0.0.1:${port}: the address is already in use.`)
        expect(result.stderr).toMatch(/hint: pass another --port .*`tessera status/)
        // The vault was released: it serves at once on another port.
        const server = await serve(dataDir)
        expect((await terminate(server)).code).toBe(0)
      } finally {
        blocker.close()
      }
    })

    it('reads the port from TESSERA_PORT, and --port wins over it', async () => {
      const blocker = createServer()
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
      const { port } = blocker.address() as { port: number }
      try {
        const fromEnv = await run(['serve', '--data-dir', dataDir], { TESSERA_PORT: String(port) })
        expect(fromEnv.code).toBe(6)
        expect(fromEnv.stderr).toContain(`127.0.0.1:${port}`)
        const server = await serve(dataDir, { TESSERA_PORT: String(port) })
        expect(server.port).not.toBe(port)
        expect((await terminate(server)).code).toBe(0)
      } finally {
        blocker.close()
      }
    })

    it('exits 2 naming TESSERA_SESSION_MAX_TTL when it is malformed', async () => {
      const result = await run(['serve', '--data-dir', dataDir, '--port', '0'], { TESSERA_SESSION_MAX_TTL: '2999y' })
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/TESSERA_SESSION_MAX_TTL must be a duration/)
    })
  })

  describe('conventions', () => {
    it('prints the usage with every command for --help, -h and help, exit 0', async () => {
      for (const flag of ['--help', '-h', 'help']) {
        const result = await run([flag])
        expect(result.code, flag).toBe(0)
        expect(result.stderr).toBe('')
        expect(result.stdout).toMatch(/^Usage: tessera <command> \[options\]/)
        for (const command of ['init', 'serve', 'status', 'stop', 'outbox']) expect(result.stdout).toMatch(new RegExp(`\\n  ${command} `))
        expect(result.stdout).toContain('TESSERA_SMTP_REQUIRE_TLS')
        expect(result.stdout).toMatch(/\n {2}10 +the server did not stop/)
      }
    })

    it('prints each command\'s own usage for --help and -h, exit 0, even beside other options', async () => {
      const cases = [['init', '--owner-email EMAIL'], ['serve', '--port PORT'], ['status', '--json'], ['stop', '--timeout SECONDS'], ['outbox', '--json']]
      for (const [command, option] of cases) {
        const spellings = command === 'init' ? [['help', command], [command, '--colour', '-h']] : [[command, '--help'], [command, '-h']]
        for (const args of spellings) {
          const result = await run(args)
          expect(result.code, args.join(' ')).toBe(0)
          expect(result.stdout).toMatch(new RegExp(`^Usage: tessera ${command} `))
          expect(result.stdout).toContain(option)
          expect(result.stdout).toContain('-h, --help')
        }
      }
    }, 120_000)

    it('prints the package version for --version and -v', async () => {
      const { version } = JSON.parse(await readFile(join(__dirname, '..', '..', '..', 'package.json'), 'utf8'))
      for (const flag of ['--version', '-v']) {
        const result = await run([flag])
        expect(result.code).toBe(0)
        expect(result.stdout).toBe(`${version}\n`)
      }
    })

    it('exits 2 with the usage on stderr for an unknown command, an unknown top-level option or none at all', async () => {
      for (const args of [['frobnicate'], ['--frobnicate'], []]) {
        const result = await run(args)
        expect(result.code, args.join(' ')).toBe(2)
        expect(result.stdout).toBe('')
        expect(result.stderr).toMatch(/^tessera: (Unknown command "frobnicate"|Unknown option --frobnicate|Missing command)\./)
        expect(result.stderr).toContain('Usage: tessera <command> [options]')
      }
    })

    it('exits 2 for a stray argument', async () => {
      const result = await run(['status', '--data-dir', dataDir, 'extra'])
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/^tessera status: Unexpected argument "extra"\./)
    })
  })
})
