/**
 * `tessera logs archive --out FILE` never writes inside the data directory,
 * where the vault's own files live (database and journal, key files, lock
 * record): such an --out is refused with exit code 2 before anything is
 * exported or pruned, also when the data directory is reached through a
 * symbolic link. A file outside it is archived as usual.
 */
import { mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../helpers/cli'

describe('tessera logs archive --out', { timeout: 120_000 }, () => {
  let root: string
  let dataDir: string
  /** A moment after the vault's first entries: they are all created before it. */
  let before: string
  /** What `logs verify` says of the vault before any archive. */
  let intact: string

  const archiveTo = (out: string) => run(['logs', 'archive', '--data-dir', dataDir, '--before', before, '--out', out])
  const verifyVault = () => run(['logs', 'verify', '--data-dir', dataDir])

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-archive-out-'))
    dataDir = join(root, 'vault')
    const init = await run(['init', '--data-dir', dataDir])
    expect(init.code, init.stderr).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 20))
    before = new Date().toISOString()
    const verified = await verifyVault()
    expect(verified.code, verified.stderr).toBe(0)
    intact = verified.stdout.split('\n')[0]
    expect(intact).toMatch(/^Audit log intact: [1-9]\d* entries, chain head at seq \d+\.$/)
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('refuses a file inside the data directory with exit code 2, writing and pruning nothing', async () => {
    const link = join(root, 'link-to-vault')
    await symlink(dataDir, link)
    const files = await readdir(dataDir)
    for (const out of [join(dataDir, 'archive.jsonl'), join(dataDir, 'tessera.db-wal'), join(dataDir, 'master.key.new'), join(link, 'a.jsonl')]) {
      const result = await archiveTo(out)
      expect(result.code, `${out}: ${result.stderr}`).toBe(2)
      expect(result.stderr).toContain(`tessera logs archive: Refusing to write ${out}: it is inside the data directory ${dataDir}.`)
      expect(result.stderr).toContain('write the archive outside the data directory')
      expect(existsSync(out), out).toBe(false)
    }
    expect(await readdir(dataDir)).toEqual(files)
    const verified = await verifyVault()
    expect(verified.code, verified.stderr).toBe(0)
    expect(verified.stdout.split('\n')[0]).toBe(intact)
    const exported = join(root, 'after-refusals.jsonl')
    expect((await run(['logs', 'export', '--data-dir', dataDir, '--out', exported])).code).toBe(0)
    expect((await run(['logs', 'verify', '--file', exported])).stdout).toMatch(/^Export intact: [1-9]\d* entries, seq 1 to /)
  })

  it('refuses an existing file, or a symbolic link even one leading nowhere, with exit code 2 and a hint, pruning nothing', async () => {
    const existing = join(root, 'existing.jsonl')
    await writeFile(existing, 'kept\n')
    const dangling = join(root, 'dangling.jsonl')
    await symlink(join(root, 'nowhere'), dangling)
    for (const out of [existing, dangling]) {
      const result = await archiveTo(out)
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toContain(`tessera logs archive: ${out} already exists.`)
      expect(result.stderr).toContain('hint: an archive never replaces a file')
    }
    expect(existsSync(join(root, 'nowhere'))).toBe(false)
    expect((await verifyVault()).stdout.split('\n')[0]).toBe(intact)
  })

  it('archives to a file outside the data directory', async () => {
    const out = join(root, 'archive.jsonl')
    const result = await archiveTo(out)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`to ${out}.`)
    expect((await run(['logs', 'verify', '--file', out])).code).toBe(0)
    expect((await verifyVault()).stdout).toContain('archived and pruned')
  })
})
