/**
 * `tessera status` and `stop` believe the vault's lock record only while a
 * process holds the OS lock: a record naming some other live process (left
 * behind, or written by hand) never gets that process signalled.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { run, serve, terminate } from '../helpers/cli'

/** Field 22 of /proc/PID/stat, as the lock records it. */
function startTimeOf(pid: number): string | undefined {
  if (process.platform !== 'linux') return undefined
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
}

function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null
}

describe.skipIf(process.platform === 'win32')('tessera status and stop against a forged lock record', { timeout: 120_000 }, () => {
  let root: string
  let dataDir: string
  let bystander: ChildProcess

  /** Writes a lock record naming the bystander process, as a `tessera serve`. */
  async function recordBystander(withStartTime: boolean): Promise<void> {
    const pid = bystander.pid!
    const record = { pid, kind: 'serve', started_at: new Date().toISOString(), ...(withStartTime ? { process_start: startTimeOf(pid) } : {}) }
    await writeFile(join(dataDir, 'tessera.lock'), JSON.stringify(record) + '\n', { mode: 0o600 })
  }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-stop-'))
    dataDir = join(root, 'vault')
    expect((await run(['init', '--data-dir', dataDir])).code).toBe(0)
    bystander = spawn('sleep', ['300'], { stdio: 'ignore' })
  })
  afterEach(() => expect(isAlive(bystander)).toBe(true))
  afterAll(async () => {
    bystander.kill('SIGKILL')
    await rm(root, { recursive: true, force: true })
  })

  it('with no process holding the vault, reports nothing running and signals no one (exit 9)', async () => {
    await recordBystander(true)
    const status = await run(['status', '--data-dir', dataDir, '--json'])
    expect(status.code).toBe(9)
    expect(JSON.parse(status.stdout)).toEqual({ data_dir: dataDir, running: false })
    const stopped = await run(['stop', '--data-dir', dataDir, '--timeout', '1'])
    expect(stopped.code).toBe(9)
    expect(stopped.stderr).toContain(`No Tessera process holds ${dataDir}; nothing to stop.\nhint: if a server runs, it serves another data directory`)
  })

  it.skipIf(process.platform !== 'linux')('while a server holds the vault, signals no process a record without a start time names (exit 5)', async () => {
    const server = await serve(dataDir)
    try {
      await recordBystander(false)
      const stopped = await run(['stop', '--data-dir', dataDir, '--timeout', '1'])
      expect(stopped.code).toBe(5)
      expect(stopped.stderr).toContain("but the vault's lock record does not name it; nothing was signalled.")
      const status = await run(['status', '--data-dir', dataDir, '--json'])
      expect(status.code).toBe(0)
      expect(JSON.parse(status.stdout)).toEqual({ data_dir: dataDir, running: true, pid: null, kind: null, url: null, started_at: null })
      expect(isAlive(server.child)).toBe(true)
    } finally {
      expect((await terminate(server)).code).toBe(0)
    }
  })
})
