#!/usr/bin/env node
// Makes sure the Electron binary is there before a desktop command runs, then
// runs that command:
//
//   node bin/ensure-electron.cjs [command [args...]]
//
// Electron's npm package downloads its binary lazily, the first time its own
// index.js is required, and electron-vite never requires it: it reads
// node_modules/electron/path.txt (or ELECTRON_EXEC_PATH) and gives up when that
// file is missing, which it always is after `npm install`. So this step runs
// Electron's own install.js when the binary is missing (same download, same
// cache, same ELECTRON_MIRROR), bounds it in time, and hands the executable to
// the command in ELECTRON_EXEC_PATH, the variable electron-vite reads. With
// ELECTRON_OVERRIDE_DIST_PATH set, the Electron in that folder is used and
// nothing is downloaded. Without a binary it explains, in one paragraph, what
// to do, and exits 1.
//
// The electron package is resolved from the working directory (the project
// root under npm scripts); the tests point it at stub packages that way.
'use strict'

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

/** A download that writes nothing for this long is given up (TESSERA_ELECTRON_STALL_SECONDS overrides it). */
const stallSeconds = Number(process.env.TESSERA_ELECTRON_STALL_SECONDS)
const STALL_MS = 1000 * (stallSeconds > 0 ? stallSeconds : 30)

class Unavailable extends Error {}

/** The folder of the electron package this project resolves. */
function electronPackageDir() {
  try {
    return path.dirname(require.resolve('electron/package.json', { paths: [process.cwd()] }))
  } catch {
    throw new Unavailable('the electron package is not installed (run `npm install` first, with dev dependencies)')
  }
}

/** The executable's path inside an Electron folder, as Electron's install.js names it. */
function executableInDist(dir) {
  try {
    return fs.readFileSync(path.join(dir, 'path.txt'), 'utf8')
  } catch {
    return { darwin: 'Electron.app/Contents/MacOS/Electron', win32: 'electron.exe' }[process.platform] ?? 'electron'
  }
}

function overriddenExecutable(dir, overrideDir) {
  const executable = path.join(overrideDir, executableInDist(dir))
  if (!fs.existsSync(executable)) throw new Unavailable(`ELECTRON_OVERRIDE_DIST_PATH is set, but ${executable} does not exist`)
  return executable
}

/** The downloaded executable, or null when path.txt or the file it names is missing. */
function downloadedExecutable(dir) {
  if (!fs.existsSync(path.join(dir, 'path.txt'))) return null
  const executable = path.join(dir, 'dist', executableInDist(dir))
  return fs.existsSync(executable) ? executable : null
}

/** Bytes under a folder (0 when it does not exist): growth here is how a download shows progress. */
function bytesUnder(folder) {
  let entries
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true })
  } catch {
    return 0
  }
  return entries.reduce((sum, entry) => {
    const child = path.join(folder, entry.name)
    if (entry.isDirectory()) return sum + bytesUnder(child)
    try {
      return sum + fs.statSync(child).size
    } catch {
      return sum
    }
  }, 0)
}

/**
 * Runs Electron's install.js. It gives the child its own temporary folder (where
 * @electron/get downloads) and kills it once neither that folder nor dist/ has
 * grown for STALL_MS: a connection that never answers would otherwise hold it
 * for minutes.
 */
async function download(dir, version) {
  console.log(`Downloading Electron ${version} for the desktop app (once; it is kept in ${path.join(dir, 'dist')})...`)
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-electron-'))
  const child = spawn(process.execPath, [path.join(dir, 'install.js')], {
    stdio: ['ignore', 'inherit', 'pipe'],
    env: { ...process.env, TMPDIR: tempDir, TMP: tempDir, TEMP: tempDir }
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))

  let stalled = false
  let lastBytes = -1
  let lastProgress = Date.now()
  const watchdog = setInterval(() => {
    const bytes = bytesUnder(tempDir) + bytesUnder(path.join(dir, 'dist'))
    if (bytes !== lastBytes) {
      lastBytes = bytes
      lastProgress = Date.now()
    } else if (Date.now() - lastProgress >= STALL_MS) {
      stalled = true
      child.kill('SIGKILL')
    }
  }, Math.min(1000, STALL_MS / 4))

  const code = await new Promise((resolve) => {
    child.on('error', () => resolve(-1))
    child.on('close', resolve)
  })
  clearInterval(watchdog)
  fs.rmSync(tempDir, { recursive: true, force: true })

  if (stalled) throw new Unavailable(`the download made no progress for ${STALL_MS / 1000} s`)
  if (code !== 0) {
    // install.js prints the error's stack: keep its first line, past any warnings before it.
    const lines = stderr.split('\n').map((line) => line.trim())
    const cause = lines.find((line) => /^\w*Error\b/.test(line)) ?? lines.find(Boolean) ?? `install.js exited with ${code}`
    throw new Unavailable(`the download failed (${cause.slice(0, 200)})`)
  }
  process.stderr.write(stderr)
}

/** The Electron executable to run, downloading it first when needed. */
async function ensureElectron() {
  const dir = electronPackageDir()
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH
  if (override) return overriddenExecutable(dir, override)
  const present = downloadedExecutable(dir)
  if (present) return present

  await download(dir, require(path.join(dir, 'package.json')).version)
  const downloaded = downloadedExecutable(dir)
  if (!downloaded) throw new Unavailable(`the download finished but ${path.join(dir, 'dist')} has no Electron executable`)
  return downloaded
}

function explain(reason) {
  return [
    `The desktop app cannot start: it needs the Electron binary, and ${reason}.`,
    'Fetch it on a machine that reaches GitHub (or the mirror named in ELECTRON_MIRROR) with `npx install-electron`, then run the command again;',
    'or use an Electron of the same version that is already on this machine:',
    '`ELECTRON_OVERRIDE_DIST_PATH=/path/to/electron-folder npm start` (the folder holding the electron executable).',
    'The headless service needs no Electron: `npx tessera serve`.'
  ].join(' ')
}

/** Runs the command with ELECTRON_EXEC_PATH set and exits as it exits. */
function run(command, args, executable) {
  const child = spawn(command, args, {
    stdio: 'inherit',
    env: { ...process.env, ELECTRON_EXEC_PATH: executable },
    shell: process.platform === 'win32'
  })
  const forward = (signal) => child.kill(signal)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward)
  child.on('error', (error) => {
    console.error(`${command}: ${error.message}`)
    process.exit(1)
  })
  child.on('close', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    }
    process.exit(code ?? 1)
  })
}

ensureElectron().then(
  (executable) => {
    const [command, ...args] = process.argv.slice(2)
    if (command) run(command, args, executable)
  },
  (error) => {
    console.error(error instanceof Unavailable ? explain(error.message) : `Could not prepare Electron: ${error.message}`)
    process.exit(1)
  }
)
