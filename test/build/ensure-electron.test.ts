/**
 * The step that `npm start`, `npm run dev` and `npm run dist` run first
 * (bin/ensure-electron.cjs), as a child process against Electron packages laid
 * out in a temporary project: stubs whose install.js "downloads", fails or
 * hangs, and the real electron package fetching from a mirror on loopback.
 */
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer as createTcpServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..', '..')
const SCRIPT = join(ROOT, 'bin', 'ensure-electron.cjs')
const VERSION = '45.5.0'
/** The executable's name in an Electron folder without path.txt, as Electron's install.js names it. */
const EXECUTABLE = ({ darwin: 'Electron.app/Contents/MacOS/Electron', win32: 'electron.exe' } as Record<string, string>)[process.platform] ?? 'electron'
const PRINT_EXEC_PATH = [process.execPath, '-e', 'console.log(process.env.ELECTRON_EXEC_PATH)']

interface Finished {
  code: number | null
  stdout: string
  stderr: string
}

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
})

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-ensure-electron-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** This machine's environment without Electron settings (mirrors, proxy, override), which npm may pass on as npm_config_electron_*. */
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_config_|npm_package_config_)?electron_/i.test(name)))

/** Runs the step in `cwd` (where it resolves `electron` from) and collects what it printed. */
function ensure(cwd: string, args: string[] = [], env: Record<string, string> = {}): Promise<Finished> {
  const child = spawn(process.execPath, [SCRIPT, ...args], { cwd, env: { ...baseEnv, ...env } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const killer = setTimeout(() => child.kill('SIGKILL'), 45_000)
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(killer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** A project whose node_modules/electron has Electron's package.json and index.js but the given install.js. */
async function stubProject(installJs: string): Promise<{ project: string; electron: string }> {
  const project = await tempDir()
  const electron = join(project, 'node_modules', 'electron')
  await mkdir(electron, { recursive: true })
  await writeFile(join(electron, 'package.json'), JSON.stringify({ name: 'electron', version: VERSION, main: 'index.js' }))
  await copyFile(join(ROOT, 'node_modules', 'electron', 'index.js'), join(electron, 'index.js'))
  await writeFile(join(electron, 'install.js'), `const fs = require('fs'), path = require('path')\nfs.writeFileSync(path.join(__dirname, 'install-ran'), '')\n${installJs}`)
  return { project, electron }
}

const installRan = (electron: string) => existsSync(join(electron, 'install-ran'))

const DOWNLOADS = `
fs.mkdirSync(path.join(__dirname, 'dist'))
fs.writeFileSync(path.join(__dirname, 'dist', 'electron'), 'not really electron')
fs.writeFileSync(path.join(__dirname, 'path.txt'), 'electron')
`
const FAILS = `
console.warn('Official Linux/ia32 support is deprecated.')
console.error(new Error('getaddrinfo ENOTFOUND github.com').stack)
process.exit(1)
`
const HANGS = `
fs.writeFileSync(path.join(__dirname, 'install-pid'), String(process.pid))
setInterval(() => undefined, 1000)
`

/** What every "no binary" answer must say, as one paragraph without a stack trace. */
function expectExplanation(result: Finished): void {
  expect(result.code).not.toBe(0)
  const paragraph = result.stderr.trim()
  expect(paragraph).not.toContain('\n')
  expect(paragraph).not.toMatch(/\bat .+:\d+:\d+/)
  expect(paragraph).toContain('npx install-electron')
  expect(paragraph).toContain('ELECTRON_OVERRIDE_DIST_PATH=')
  expect(paragraph).toContain('npx tessera serve')
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

describe('ensure-electron with a binary already there', () => {
  it('hands the downloaded executable to the command without downloading again', async () => {
    const { project, electron } = await stubProject(FAILS)
    await mkdir(join(electron, 'dist'))
    await writeFile(join(electron, 'dist', 'electron'), '')
    await writeFile(join(electron, 'path.txt'), 'electron')

    const result = await ensure(project, PRINT_EXEC_PATH)

    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout.trim()).toBe(join(electron, 'dist', 'electron'))
    expect(installRan(electron)).toBe(false)
  })

  it('uses the Electron in ELECTRON_OVERRIDE_DIST_PATH and downloads nothing', async () => {
    const { project, electron } = await stubProject(FAILS)
    const existing = await tempDir()
    await mkdir(join(existing, EXECUTABLE, '..'), { recursive: true })
    await writeFile(join(existing, EXECUTABLE), '')

    const result = await ensure(project, PRINT_EXEC_PATH, { ELECTRON_OVERRIDE_DIST_PATH: existing })

    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout.trim()).toBe(join(existing, EXECUTABLE))
    expect(installRan(electron)).toBe(false)
  })

  it('exits as the command exits', async () => {
    const { project } = await stubProject(DOWNLOADS)
    const result = await ensure(project, [process.execPath, '-e', 'process.exit(3)'])
    expect(result.code).toBe(3)
  })
})

describe('ensure-electron with the binary missing', () => {
  it('downloads it through the package install.js, then runs the command', async () => {
    const { project, electron } = await stubProject(DOWNLOADS)

    const result = await ensure(project, PRINT_EXEC_PATH)

    expect(result.code).toBe(0)
    expect(installRan(electron)).toBe(true)
    expect(await readFile(join(electron, 'path.txt'), 'utf8')).toBe('electron')
    expect(result.stdout.trim().split('\n').at(-1)).toBe(join(electron, 'dist', 'electron'))
  })

  it('explains what to do when the download fails, and runs nothing', async () => {
    const { project, electron } = await stubProject(FAILS)
    const marker = join(project, 'command-ran')

    const result = await ensure(project, [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`])

    expectExplanation(result)
    expect(result.stderr).toContain('the download failed (Error: getaddrinfo ENOTFOUND github.com)')
    expect(existsSync(marker)).toBe(false)
    expect(existsSync(join(electron, 'path.txt'))).toBe(false)
  })

  it('gives up a download that makes no progress and stops it', async () => {
    const { project, electron } = await stubProject(HANGS)

    const result = await ensure(project, [], { TESSERA_ELECTRON_STALL_SECONDS: '1' })

    expectExplanation(result)
    expect(result.stderr).toContain('the download made no progress for 1 s')
    expect(processGone(Number(await readFile(join(electron, 'install-pid'), 'utf8')))).toBe(true)
  })

  it('explains when install.js succeeds but leaves no executable', async () => {
    const { project, electron } = await stubProject('')
    const result = await ensure(project)
    expectExplanation(result)
    expect(result.stderr).toContain(`the download finished but ${join(electron, 'dist')} has no Electron executable`)
  })

  it('explains when ELECTRON_OVERRIDE_DIST_PATH holds no Electron', async () => {
    const { project, electron } = await stubProject(DOWNLOADS)
    const empty = await tempDir()

    const result = await ensure(project, [], { ELECTRON_OVERRIDE_DIST_PATH: empty })

    expectExplanation(result)
    expect(result.stderr).toContain(`ELECTRON_OVERRIDE_DIST_PATH is set, but ${join(empty, EXECUTABLE)} does not exist`)
    expect(installRan(electron)).toBe(false)
  })

  it('explains when the electron package itself is not installed', async () => {
    const result = await ensure(await tempDir())
    expectExplanation(result)
    expect(result.stderr).toContain('the electron package is not installed (run `npm install` first')
  })
})

/** A zip archive with stored (uncompressed) entries, enough for Electron's extractor. */
function storedZip(files: Record<string, { data: Buffer; mode: number }>): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const [name, { data, mode }] of Object.entries(files)) {
    const fileName = Buffer.from(name)
    const crc = crc32(data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(0x21, 12) // 1980-01-01
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(data.length, 18)
    local.writeUInt32LE(data.length, 22)
    local.writeUInt16LE(fileName.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE((3 << 8) | 20, 4) // made on Unix, so the mode below counts
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(0x21, 14)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(data.length, 20)
    central.writeUInt32LE(data.length, 24)
    central.writeUInt16LE(fileName.length, 28)
    central.writeUInt32LE(((0o100000 | mode) << 16) >>> 0, 38)
    central.writeUInt32LE(offset, 42)
    locals.push(local, fileName, data)
    centrals.push(central, fileName)
    offset += local.length + fileName.length + data.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(Object.keys(files).length, 8)
  end.writeUInt16LE(Object.keys(files).length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}

/** A project with the real electron package (its index.js, install.js and @electron/get). */
async function realElectronProject(): Promise<{ project: string; electron: string }> {
  const project = await tempDir()
  const electron = join(project, 'node_modules', 'electron')
  await mkdir(electron, { recursive: true })
  for (const file of ['package.json', 'index.js', 'install.js', 'checksums.json']) {
    await copyFile(join(ROOT, 'node_modules', 'electron', file), join(electron, file))
  }
  for (const scope of ['@electron', '@electron-internal']) {
    await symlink(join(ROOT, 'node_modules', scope), join(project, 'node_modules', scope), 'dir')
  }
  return { project, electron }
}

async function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('no port')
  return `http://127.0.0.1:${address.port}/`
}

describe.runIf(process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch))('ensure-electron with the real electron package', () => {
  const artifact = `electron-v${VERSION}-linux-${process.arch}.zip`

  it('downloads from ELECTRON_MIRROR through Electron install.js and writes path.txt', async () => {
    const binary = randomBytes(4096)
    const zip = storedZip({ electron: { data: binary, mode: 0o755 }, version: { data: Buffer.from(VERSION), mode: 0o644 } })
    const shasums = `${createHash('sha256').update(zip).digest('hex')} *${artifact}\n`
    const mirror = createHttpServer((req, res) => {
      if (req.url === `/v${VERSION}/${artifact}`) res.end(zip)
      else if (req.url === `/v${VERSION}/SHASUMS256.txt`) res.end(shasums)
      else res.writeHead(404).end()
    })
    const url = await listen(mirror)
    cleanups.push(() => new Promise((resolve) => mirror.close(resolve)))
    const { project, electron } = await realElectronProject()

    const result = await ensure(project, PRINT_EXEC_PATH, {
      ELECTRON_MIRROR: url,
      electron_use_remote_checksums: '1',
      electron_config_cache: await tempDir()
    })

    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(await readFile(join(electron, 'path.txt'), 'utf8')).toBe('electron')
    expect(await readFile(join(electron, 'dist', 'electron'))).toEqual(binary)
    expect(result.stdout.trim().split('\n').at(-1)).toBe(join(electron, 'dist', 'electron'))
  })

  it('gives up a mirror that accepts the connection and never answers', async () => {
    const sockets: Socket[] = []
    const silent = createTcpServer((socket) => sockets.push(socket))
    const url = await listen(silent)
    cleanups.push(() => {
      sockets.forEach((socket) => socket.destroy())
      return new Promise((resolve) => silent.close(resolve))
    })
    const { project, electron } = await realElectronProject()

    const result = await ensure(project, [], { ELECTRON_MIRROR: url, electron_config_cache: await tempDir(), TESSERA_ELECTRON_STALL_SECONDS: '1' })

    expectExplanation(result)
    expect(result.stderr).toContain('the download made no progress for 1 s')
    expect(existsSync(join(electron, 'path.txt'))).toBe(false)
  })
})
