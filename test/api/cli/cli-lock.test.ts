/**
 * The vault lock as operators meet it through the CLI: `status` and `stop`,
 * a server killed with SIGKILL, an interrupted `init`, two servers starting
 * at once, the desktop app holding the vault, `npm run` killed under a
 * server, and permission failures.
 */
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { request as httpRequest, type ClientRequest } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readySodium } from '../../../src/main/crypto/sodium'
import { DesktopVault } from '../../../src/main/desktop/desktop-vault'
import { keyFileStore } from '../../../src/main/desktop/key-store'
import { SETTINGS_FILE, SettingsStore } from '../../../src/main/desktop/settings'
import { silentLogger } from '../../../src/main/infra/logger'
import { listening, run, serve, start, terminate, track } from '../../helpers/cli'

const REPO = join(__dirname, '..', '..', '..')
const SYSCTL = '/proc/sys/net/ipv4/ip_unprivileged_port_start'
const UNPRIVILEGED_PORTS_FROM = existsSync(SYSCTL) ? Number(readFileSync(SYSCTL, 'utf8')) : 1024

/** Resolves once `path` exists. */
async function appeared(path: string): Promise<void> {
  while (!existsSync(path)) await sleep(2)
}

async function statusOf(dataDir: string) {
  const result = await run(['status', '--data-dir', dataDir, '--json'])
  return { code: result.code, ...JSON.parse(result.stdout) }
}

describe('tessera status, stop and the vault lock', { timeout: 120_000 }, () => {
  let root: string
  let dataDir: string
  let adminKey: string
  /** How long `init` works on its data dir here (from creating it to exiting), to spread the kills of the interrupted-init test over it. */
  let initWorkMs: number

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-lock-'))
    dataDir = join(root, 'vault')
    const init = start(['init', '--data-dir', dataDir, '--json'])
    await appeared(dataDir)
    const began = Date.now()
    const { stdout } = await init.finished
    initWorkMs = Date.now() - began
    adminKey = JSON.parse(stdout).application.key
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('status reports no server with exit code 9, then the running one with its process id and URL', async () => {
    expect(await statusOf(dataDir)).toEqual({ code: 9, data_dir: dataDir, running: false })
    const text = await run(['status', '--data-dir', dataDir])
    expect(text.code).toBe(9)
    expect(text.stdout).toBe(`Not running: no Tessera process holds ${dataDir}.\n`)

    const server = await serve(dataDir)
    expect(await statusOf(dataDir)).toEqual({
      code: 0,
      data_dir: dataDir,
      running: true,
      pid: server.child.pid,
      kind: 'serve',
      url: server.url,
      started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/)
    })
    const running = await run(['status', '--data-dir', dataDir])
    expect(running.stdout).toMatch(new RegExp(`^Running: \`tessera serve\` \\(process ${server.child.pid}, ${server.url}\\), on ${dataDir} since `))
    expect((await terminate(server)).code).toBe(0)
    expect((await statusOf(dataDir)).running).toBe(false)
  })

  it('stop shuts the server down gracefully and waits for it; with nothing running it exits 9', async () => {
    const server = await serve(dataDir)
    const stopped = await run(['stop', '--data-dir', dataDir])
    expect(stopped.code).toBe(0)
    expect(stopped.stdout).toBe(`Stopped \`tessera serve\` (process ${server.child.pid}, ${server.url}).\n`)
    // Exit code 0 is the graceful path (SIGTERM handled, vault closed); its lock record is gone.
    expect(await server.finished).toMatchObject({ code: 0, signal: null })
    expect(existsSync(join(dataDir, 'tessera.lock'))).toBe(false)

    const again = await run(['stop', '--data-dir', dataDir])
    expect(again.code).toBe(9)
    expect(again.stderr).toBe(
      `tessera stop: No Tessera process holds ${dataDir}; nothing to stop.\nhint: if a server runs, it serves another data directory: give \`tessera stop\` its --data-dir (or TESSERA_DATA_DIR), as the server was started with.\n`
    )
  })

  it('stop exits 10 when the server is still finishing a request at the timeout', async () => {
    const server = await serve(dataDir)
    // A request whose body never comes: the server keeps it in flight while it shuts down.
    const held: ClientRequest = httpRequest(`${server.url}/tokens`, {
      method: 'POST',
      headers: { 'svc-api-key': adminKey, 'content-type': 'application/json', 'content-length': 100, expect: '100-continue' }
    })
    held.on('error', () => undefined)
    await new Promise((resolve) => {
      held.on('continue', resolve)
      held.flushHeaders()
    })
    const result = await run(['stop', '--data-dir', dataDir, '--timeout', '1'])
    expect(result.code).toBe(10)
    expect(result.stderr).toMatch(new RegExp(`^tessera stop: \`tessera serve\` \\(process ${server.child.pid}, .*\\) did not exit within 1 s`))
    expect(result.stderr).toContain(`kill -9 ${server.child.pid}`)
    held.destroy()
    expect((await server.finished).code).toBe(0)
  })

  it('after kill -9, the next serve starts at once and status no longer counts the dead one', async () => {
    const first = await serve(dataDir)
    first.child.kill('SIGKILL')
    expect((await first.finished).signal).toBe('SIGKILL')
    // The dead server's record is still there, naming it.
    expect(JSON.parse(await readFile(join(dataDir, 'tessera.lock'), 'utf8')).pid).toBe(first.child.pid)
    expect((await statusOf(dataDir)).code).toBe(9)
    expect((await run(['stop', '--data-dir', dataDir])).code).toBe(9)

    const second = await serve(dataDir)
    const health = await fetch(`${second.url}/health`)
    expect(health.status).toBe(200)
    expect((await statusOf(dataDir)).pid).toBe(second.child.pid)
    expect((await terminate(second)).code).toBe(0)
  })

  it('of two servers started at once, exactly one wins and the other names its process id, also over a crashed owner', async () => {
    for (const crashedBefore of [false, true]) {
      if (crashedBefore) {
        const crashed = await serve(dataDir)
        crashed.child.kill('SIGKILL')
        await crashed.finished
      }
      const both = [start(['serve', '--data-dir', dataDir, '--port', '0']), start(['serve', '--data-dir', dataDir, '--port', '0'])]
      const lines = await Promise.all(both.map((server) => server.firstLine))
      const winners = both.filter((_, i) => lines[i].startsWith('Tessera listening on'))
      expect(winners, JSON.stringify(lines)).toHaveLength(1)
      const [winner] = winners
      const loser = await both.find((server) => server !== winner)!.finished
      expect(loser.code).toBe(5)
      expect(loser.stderr).toMatch(new RegExp(`^tessera serve: The vault in ${dataDir} is in use by \`tessera serve\` \\(process ${winner.child.pid}[,)]`))
      expect(loser.stderr).toContain(`hint: use that server, or stop it with \`tessera stop --data-dir ${dataDir}\``)
      expect((await terminate(winner)).code).toBe(0)
    }
  })

  it('an init killed at any moment never leaves the data dir unusable', async () => {
    const ITERATIONS = 6
    for (let i = 0; i < ITERATIONS; i++) {
      const dir = join(root, `interrupted-${i}`)
      const init = start(['init', '--data-dir', dir, '--json'])
      // From the moment the data dir exists to the last write, spread over the iterations, with jitter.
      await Promise.race([appeared(dir), init.finished])
      const delay = Math.round(((i + Math.random()) / ITERATIONS) * initWorkMs)
      await sleep(delay)
      init.child.kill('SIGKILL')
      const killed = await init.finished

      const again = await run(['init', '--data-dir', dir, '--json'])
      if (again.code === 0) {
        expect(JSON.parse(again.stdout).application.key).toMatch(/^key_management_/)
        continue
      }
      // The killed init had finished its work: the vault must then open and serve.
      expect(again.code, `${delay} ms, killed: ${JSON.stringify(killed)}; ${again.stderr}`).toBe(4)
      const server = await serve(dir)
      expect((await fetch(`${server.url}/health`)).status).toBe(200)
      expect((await terminate(server)).code).toBe(0)
    }
  }, 240_000)

  it('sees the desktop app as the owner, and refuses serve naming it', async () => {
    await readySodium()
    const dir = join(root, 'desktop')
    await mkdir(dir, { mode: 0o700 })
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as AddressInfo).port
    await new Promise((resolve) => blocker.close(resolve))
    await writeFile(join(dir, SETTINGS_FILE), JSON.stringify({ port }))
    const settings = new SettingsStore(dir)
    await settings.load()
    const desktop = new DesktopVault({ dataDir: dir, keyStore: keyFileStore(dir, {}), settings, logger: silentLogger(), version: '0.0.0' })
    try {
      await desktop.create({ tenantName: 'Desktop', keyStorage: 'key-file' })
      expect(await statusOf(dir)).toMatchObject({ code: 0, running: true, kind: 'desktop', pid: process.pid, url: `http://127.0.0.1:${port}` })
      const refused = await run(['serve', '--data-dir', dir, '--port', '0'])
      expect(refused.code).toBe(5)
      expect(refused.stderr).toContain(`is in use by the Tessera desktop app (process ${process.pid}, http://127.0.0.1:${port}).`)
      expect(refused.stderr).toMatch(/hint: quit the desktop app, or run `tessera stop/)
      await desktop.lock()
      expect((await statusOf(dir)).running).toBe(false)
    } finally {
      await desktop.shutdown()
    }
  })

  it('a server started by `npm run` stops gracefully when npm is killed, releasing the vault', async () => {
    const npm = track('npm', ['run', '--silent', 'tessera', '--', 'serve', '--data-dir', dataDir, '--port', '0'], { TESSERA_LOG_LEVEL: 'info' }, { cwd: REPO })
    const server = await listening(npm)
    const { pid } = await statusOf(dataDir)
    expect(pid).not.toBe(npm.child.pid)

    npm.child.kill('SIGKILL')
    // npm's pipes close when the last process holding them, the server, has exited.
    const ended = await server.finished
    expect(ended.stderr).toContain('"reason":"npm exited"')
    expect(existsSync(join(dataDir, 'tessera.lock'))).toBe(false)
    expect((await statusOf(dataDir)).running).toBe(false)
    const next = await serve(dataDir)
    expect((await terminate(next)).code).toBe(0)
  })

  describe('permissions', () => {
    // As root every file is readable and every port bindable: run these as nobody.
    const asRoot = process.getuid?.() === 0
    const as = asRoot ? { uid: 65534, gid: 65534 } : {}
    let dir: string

    beforeAll(async () => {
      const parent = join(root, 'permissions')
      await mkdir(parent, { mode: 0o755 })
      await chmod(root, 0o755)
      dir = join(parent, 'vault')
      await mkdir(dir, { mode: 0o700 })
      if (asRoot) await chown(dir, 65534, 65534)
      const init = await run(['init', '--data-dir', dir, '--json'], {}, as)
      expect(init.code, init.stderr).toBe(0)
    })

    it.skipIf(UNPRIVILEGED_PORTS_FROM <= 1)('exits 7 for a privileged port', async () => {
      const result = await run(['serve', '--data-dir', dir, '--port', '1'], {}, as)
      expect(result.code).toBe(7)
      expect(result.stderr).toContain('tessera serve: Not allowed to listen on 127.0.0.1:1.')
      expect(result.stderr).toMatch(/hint: ports below 1024 need privileges/)
    })

    it('exits 7 for a data dir it may not read', async () => {
      await chmod(dir, 0o000)
      try {
        for (const command of ['serve', 'status', 'outbox']) {
          const result = await run([command, '--data-dir', dir], {}, as)
          expect(result.code, command).toBe(7)
          expect(result.stderr).toContain(`tessera ${command}: Permission denied on the data directory ${dir}.`)
        }
      } finally {
        await chmod(dir, 0o700)
      }
    })
  })
})
