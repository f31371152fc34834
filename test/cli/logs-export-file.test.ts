/**
 * `tessera logs export --out FILE` as a script meets it: the file appears
 * whole or not at all, owner-only, never written through a symlink, never in
 * place of a device or a pipe, and never inside the data directory.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, cp, lstat, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../helpers/cli'
import { withVaultFile } from '../helpers/database'

const PREVIOUS = 'the previous export\n'

describe('tessera logs export --out', { timeout: 120_000 }, () => {
  let root: string
  let dataDir: string
  /** A copy of the vault whose audit chain is broken. */
  let broken: string

  const exportTo = (dir: string, out: string) => run(['logs', 'export', '--data-dir', dir, '--out', out])

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-export-'))
    dataDir = join(root, 'vault')
    const init = await run(['init', '--data-dir', dataDir])
    expect(init.code, init.stderr).toBe(0)
    broken = join(root, 'broken')
    await cp(dataDir, broken, { recursive: true })
    await withVaultFile(broken, (db) => db.raw('UPDATE logs SET message = ? WHERE seq = 1', ['edited']))
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('keeps the previous export when the chain is broken (exit 12)', async () => {
    const out = join(root, 'kept.jsonl')
    await writeFile(out, PREVIOUS)
    const result = await exportTo(broken, out)
    expect(result.code).toBe(12)
    expect(result.stdout).toContain('Not exported: The audit log is broken at seq 1')
    expect(await readFile(out, 'utf8')).toBe(PREVIOUS)
  })

  it('replaces an existing file with an owner-only one', async () => {
    const out = join(root, 'readable.jsonl')
    await writeFile(out, PREVIOUS)
    await chmod(out, 0o644)
    const result = await exportTo(dataDir, out)
    expect(result.code, result.stderr).toBe(0)
    expect((await stat(out)).mode & 0o777).toBe(0o600)
    expect((await run(['logs', 'verify', '--file', out])).code).toBe(0)
  })

  it('replaces a symlink at --out instead of writing through it', async () => {
    const victim = join(root, 'victim')
    await writeFile(victim, PREVIOUS)
    const out = join(root, 'link.jsonl')
    await symlink(victim, out)
    const result = await exportTo(dataDir, out)
    expect(result.code, result.stderr).toBe(0)
    expect(await readFile(victim, 'utf8')).toBe(PREVIOUS)
    expect((await lstat(out)).isFile()).toBe(true)
  })

  it('refuses a file inside the data directory, also through a symbolic link, with exit code 2, leaving the master key alone', async () => {
    const key = await readFile(join(dataDir, 'master.key'), 'utf8')
    const link = join(root, 'link-to-vault')
    await symlink(dataDir, link)
    for (const out of [join(dataDir, 'master.key'), join(dataDir, 'export.jsonl'), join(link, 'a.jsonl')]) {
      const result = await exportTo(dataDir, out)
      expect(result.code, out).toBe(2)
      expect(result.stderr).toContain(`tessera logs export: Refusing to write ${out}: it is inside the data directory ${dataDir}.`)
      expect(result.stderr).toContain('write the export outside the data directory')
    }
    expect(existsSync(join(dataDir, 'export.jsonl'))).toBe(false)
    expect(existsSync(join(dataDir, 'a.jsonl'))).toBe(false)
    expect(await readFile(join(dataDir, 'master.key'), 'utf8')).toBe(key)
    expect((await run(['keys', 'status', '--data-dir', dataDir])).code).toBe(0)
  })

  it('refuses a pipe at --out, or a link to one, with exit code 2, and leaves it there', async () => {
    const fifo = join(root, 'pipe')
    execFileSync('mkfifo', [fifo])
    const link = join(root, 'link-to-pipe.jsonl')
    await symlink(fifo, link)
    for (const out of [fifo, link]) {
      const result = await exportTo(dataDir, out)
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toContain(`Cannot write ${out}: it is not a regular file (a device, a pipe or a socket).`)
    }
    expect((await lstat(fifo)).isFIFO()).toBe(true)
    expect((await lstat(link)).isSymbolicLink()).toBe(true)
  })

  it('refuses a directory or a missing folder with exit code 2', async () => {
    const directory = await exportTo(dataDir, root)
    expect(directory.code).toBe(2)
    expect(directory.stderr).toContain(`Cannot write ${root}: it is a directory.`)
    const missing = await exportTo(dataDir, join(root, 'no', 'such.jsonl'))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('its folder does not exist')
  })

  it('refuses a file name too long to create with exit code 2, naming --out', async () => {
    for (const length of [300, 250]) {
      // 250 characters: the name itself fits, the temporary one written beside it does not.
      const result = await exportTo(dataDir, join(root, 'e'.repeat(length)))
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toContain('the path, or a name in it, is too long.')
      expect(result.stderr).toContain('hint: give --out a shorter path')
    }
  })
})
