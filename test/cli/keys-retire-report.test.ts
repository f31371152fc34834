/**
 * `tessera keys retire --report FILE`: the report's path is checked before
 * the key is deleted, and a report that still cannot be written is printed
 * rather than lost, with its own exit code.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../helpers/cli'

describe('tessera keys retire --report', { timeout: 120_000 }, () => {
  let root: string
  let dataDir: string

  const keys = (...args: string[]) => run(['keys', ...args, '--data-dir', dataDir])
  const versions = async () => JSON.parse((await keys('status', '--json')).stdout).tenants[0].versions as Array<{ version: number; retired_at?: string }>

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-retire-'))
    dataDir = join(root, 'vault')
    expect((await run(['init', '--data-dir', dataDir])).code).toBe(0)
    const rotated = await keys('rotate')
    expect(rotated.code, rotated.stderr).toBe(0)
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('refuses a report path that exists (a directory included) with exit code 2, before retiring anything', async () => {
    const directory = join(root, 'reports')
    await mkdir(directory)
    const result = await keys('retire', '--version', '1', '--report', directory)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`tessera keys retire: ${directory} already exists.`)
    expect((await versions()).find((version) => version.version === 1)!.retired_at).toBeUndefined()
  })

  it('refuses a report file name too long to create with exit code 2, before retiring anything', async () => {
    const tooLong = join(root, `${'r'.repeat(300)}.json`)
    const result = await keys('retire', '--version', '1', '--report', tooLong)
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain('the path, or a name in it, is too long.')
    expect(result.stderr).toContain('hint: give --report a shorter path')
    expect((await versions()).find((version) => version.version === 1)!.retired_at).toBeUndefined()
  })

  it('refuses a report path through a loop of symbolic links with exit code 2, before retiring anything', async () => {
    const loop = join(root, 'loop')
    await symlink(loop, loop)
    const result = await keys('retire', '--version', '1', '--report', join(loop, 'report.json'))
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain('hint: give --report')
    expect((await versions()).find((version) => version.version === 1)!.retired_at).toBeUndefined()
  })

  it('says what to do when the version does not exist or is the current one (exit 11)', async () => {
    const missing = await keys('retire', '--version', '99')
    expect(missing.code, missing.stderr).toBe(11)
    expect(missing.stderr).toContain('tessera keys retire: Data key version 99 not found.\nhint: `tessera keys status` (with the same --data-dir or --database-url) lists')
    const current = await keys('retire', '--version', '2')
    expect(current.code, current.stderr).toBe(11)
    expect(current.stderr).toContain('tessera keys retire: Data key version 2 is the current one; rotate first')
    expect(current.stderr).toContain('\nhint: `tessera keys status` (with the same --data-dir or --database-url) shows which version is current')
  })

  it.skipIf(process.platform !== 'linux' || !existsSync('/sys/kernel'))('prints the report and exits 14 when it cannot be written after the key is deleted', async () => {
    // sysfs lets no one, root included, create a file.
    const unwritable = join('/sys', `tessera-report-${process.pid}.json`)
    const result = await keys('retire', '--version', '1', '--report', unwritable)
    expect(result.code).toBe(14)
    expect(result.stderr).toContain(`tessera keys retire: Data key version 1 retired; its key is deleted. Report not written: cannot write ${unwritable} (`)
    expect(JSON.parse(result.stdout)).toMatchObject({ report: 'tessera-data-key-retirement', retired_version: 1 })
    expect((await versions()).find((version) => version.version === 1)!.retired_at).toEqual(expect.any(String))
  })
})
