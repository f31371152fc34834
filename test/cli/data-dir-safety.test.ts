/**
 * The data directory holds the master key: nobody but its owner may plant
 * files in it, and Tessera writes its key and lock files so that a file or
 * symlink planted at a temporary name is never written through.
 */
import { existsSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../helpers/cli'

describe.skipIf(process.platform === 'win32')('the data directory and its key files', { timeout: 120_000 }, () => {
  let root: string
  let dataDir: string

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-data-dir-'))
    dataDir = join(root, 'vault')
    const init = await run(['init', '--data-dir', dataDir, '--json'])
    expect(init.code, init.stderr).toBe(0)
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('init refuses an existing directory other users may write, with exit code 8, and creates nothing in it', async () => {
    const open = join(root, 'world-writable')
    await mkdir(open)
    await chmod(open, 0o777)
    const result = await run(['init', '--data-dir', open])
    expect(result.code).toBe(8)
    expect(result.stderr).toContain(`tessera init: The data directory ${open} is writable by other users (mode 0777).`)
    expect(result.stderr).toContain(`hint: make it private to its owner: chmod 700 ${open}`)
    expect(existsSync(join(open, 'master.key'))).toBe(false)
    expect(existsSync(join(open, 'tessera.db'))).toBe(false)
  })

  it('every command refuses a vault directory that became group-writable', async () => {
    await chmod(dataDir, 0o770)
    try {
      for (const args of [['keys', 'rotate-master'], ['status'], ['stop']]) {
        const result = await run([...args, '--data-dir', dataDir])
        expect(result.code, args.join(' ')).toBe(8)
        expect(result.stderr).toContain(`The data directory ${dataDir} is writable by other users (mode 0770).`)
      }
    } finally {
      await chmod(dataDir, 0o700)
    }
  })

  it.skipIf(process.getuid?.() !== 0)('refuses a data directory owned by another user', async () => {
    const theirs = join(root, 'theirs')
    await mkdir(theirs, { mode: 0o700 })
    await chown(theirs, 65534, 65534)
    const result = await run(['init', '--data-dir', theirs])
    expect(result.code).toBe(8)
    expect(result.stderr).toContain(`The data directory ${theirs} belongs to another user (uid 65534).`)
    expect(existsSync(join(theirs, 'master.key'))).toBe(false)
  })

  it('rotate-master writes neither the new key nor the lock record through symlinks planted at temporary names', async () => {
    const stolenKey = join(root, 'stolen-key')
    const stolenLock = join(root, 'stolen-lock')
    await symlink(stolenKey, join(dataDir, 'master.key.tmp'))
    await symlink(stolenLock, join(dataDir, 'tessera.lock.tmp'))
    const before = await readFile(join(dataDir, 'master.key'), 'utf8')

    const rotated = await run(['keys', 'rotate-master', '--data-dir', dataDir])
    expect(rotated.code, rotated.stderr).toBe(0)
    expect(existsSync(stolenKey)).toBe(false)
    expect(existsSync(stolenLock)).toBe(false)
    const after = await readFile(join(dataDir, 'master.key'), 'utf8')
    expect(after).not.toBe(before)
    expect((await run(['keys', 'status', '--data-dir', dataDir])).code).toBe(0)
  })

  it('init refuses a data directory path too long to create with exit code 8, naming --data-dir', async () => {
    const result = await run(['init', '--data-dir', join(root, 'd'.repeat(5000))])
    expect(result.code, result.stderr).toBe(8)
    expect(result.stderr).toContain('the path, or a name in it, is too long.')
    expect(result.stderr).toContain('hint: give --data-dir (or TESSERA_DATA_DIR) a shorter path')
  })

  it('refuses a data directory path through a loop of symbolic links with exit code 8', async () => {
    const loop = join(root, 'loop')
    await symlink(loop, loop)
    const result = await run(['keys', 'status', '--data-dir', join(loop, 'vault')])
    expect(result.code, result.stderr).toBe(8)
    expect(result.stderr).toContain('its symbolic links loop.')
    expect(result.stderr).toContain('hint: give --data-dir (or TESSERA_DATA_DIR)')
  })
})
