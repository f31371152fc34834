/**
 * `tessera keys rotate-master --new-key-file FILE` (a master key in
 * TESSERA_MASTER_KEY): a path it cannot use is refused before the vault
 * changes, and a write that fails leaves no file behind to block a retry.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../helpers/cli'

const OLD_KEY = Buffer.alloc(32, 9).toString('base64')

/** Mounts a 4 KiB tmpfs at `dir` (root on Linux only); false where that is not possible. */
function mountTiny(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', dir], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

describe('tessera keys rotate-master --new-key-file', { timeout: 120_000 }, () => {
  let root: string
  let dataDir: string

  const rotate = (file: string) => run(['keys', 'rotate-master', '--data-dir', dataDir, '--new-key-file', file], { TESSERA_MASTER_KEY: OLD_KEY })
  const opensWithOldKey = async () => (await run(['keys', 'status', '--data-dir', dataDir], { TESSERA_MASTER_KEY: OLD_KEY })).code === 0

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-new-key-'))
    dataDir = join(root, 'vault')
    expect((await run(['init', '--data-dir', dataDir], { TESSERA_MASTER_KEY: OLD_KEY })).code).toBe(0)
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('refuses a file in a folder that does not exist with exit code 2, before the vault changes', async () => {
    const file = join(root, 'no', 'such', 'new.key')
    const result = await rotate(file)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`tessera keys rotate-master: Cannot write ${file}: its folder does not exist.`)
    expect(await opensWithOldKey()).toBe(true)
  })

  it('refuses a symlink at the path, even a dangling one, with exit code 2', async () => {
    const file = join(root, 'dangling.key')
    await symlink(join(root, 'elsewhere'), file)
    const result = await rotate(file)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`${file} already exists.`)
    expect(existsSync(join(root, 'elsewhere'))).toBe(false)
    expect(await opensWithOldKey()).toBe(true)
  })

  it('refuses a file name too long to create with exit code 2, naming --new-key-file, before the vault changes', async () => {
    const result = await rotate(join(root, 'k'.repeat(300)))
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain('the path, or a name in it, is too long.')
    expect(result.stderr).toContain('hint: give --new-key-file a shorter path')
    expect(await opensWithOldKey()).toBe(true)
  })

  it.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)('leaves no file when the write fails, so a retry works', async (context) => {
    const full = join(root, 'full')
    await mkdir(full)
    if (!mountTiny(full)) return context.skip()
    try {
      await writeFile(join(full, 'filler'), Buffer.alloc(4096)).catch(() => undefined)
      const file = join(full, 'new.key')
      const failed = await rotate(file)
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain('No space left on the device')
      expect(existsSync(file)).toBe(false)
      expect(await opensWithOldKey()).toBe(true)

      await rm(join(full, 'filler'))
      const retried = await rotate(file)
      expect(retried.code, retried.stderr).toBe(0)
      expect(existsSync(file)).toBe(true)
    } finally {
      execFileSync('umount', [full])
    }
  })
})
