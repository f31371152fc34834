/**
 * docs/team-server.md's deployment against what the command does: its
 * service units run the `tessera` the Install section links to a checkout,
 * never `npx tessera` (which, outside the checkout, would fetch and run an
 * unrelated package of that name from the npm registry), they set only
 * variables the command reads, and the command runs through such a link from
 * any directory.
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ENV_NAMES } from '../../src/main/cli/environment'
import { track } from '../helpers/cli'

const ROOT = join(__dirname, '..', '..')
const guide = readFileSync(join(ROOT, 'docs', 'team-server.md'), 'utf8')
const INSTALLED = '/usr/local/bin/tessera'

/** The systemd units the guide shows: its ```ini blocks with a [Service] section. */
const units = [...guide.matchAll(/```ini\n([\s\S]*?)```/g)].map(([, unit]) => unit).filter((unit) => unit.includes('[Service]'))

describe('docs/team-server.md', () => {
  it('shows service units, each running the installed command and never npx', () => {
    expect(units.length).toBeGreaterThanOrEqual(2)
    for (const unit of units) {
      const execStart = /^ExecStart=(.*)$/m.exec(unit)?.[1]
      expect(execStart, unit).toBe(`${INSTALLED} serve`)
    }
    expect(guide).not.toMatch(/ExecStart=\S*npx/)
    expect(guide).toMatch(new RegExp(`ln -sfn /opt/tessera-[\\d.]+/bin/tessera\\.cjs ${INSTALLED}`))
  })

  it('sets only variables the command reads in its units', () => {
    const variables = units.flatMap((unit) => [...unit.matchAll(/^Environment=(TESSERA_[A-Z_]+)=/gm)].map(([, name]) => name))
    expect(variables.length).toBeGreaterThan(0)
    expect(variables.filter((name) => !(ENV_NAMES as readonly string[]).includes(name))).toEqual([])
  })

  it('runs the command through a link to the checkout, from another directory, as installed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-installed-'))
    try {
      const link = join(dir, 'tessera')
      await symlink(join(ROOT, 'bin', 'tessera.cjs'), link)
      const { code, stdout } = await track(link, ['--help'], {}, { cwd: dir }).finished
      expect(code).toBe(0)
      expect(stdout).toMatch(/^Usage: tessera <command>/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
