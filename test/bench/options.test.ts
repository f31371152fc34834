import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..', '..')

function bench(script: string, ...args: string[]) {
  return spawnSync(process.execPath, ['bin/run-ts.cjs', `bench/${script}`, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 })
}

describe.each([
  ['npm run bench', 'run.ts'],
  ['npm run bench:cpu', 'cpu.ts']
])('%s options', (command, script) => {
  it('prints its options with --help and exits 0, measuring nothing', () => {
    const result = bench(script, '--help')
    expect(result.status).toBe(0)
    expect(result.stdout).toContain(`${command} -- [options]`)
    expect(result.stdout).toMatch(/--engine ENGINE\s+sqlite \(default\) or postgres/)
    expect(result.stdout).not.toMatch(/server pinned|^round /m)
  })

  it('refuses an unknown option with the usage and exit code 2, instead of a run that ignores it', () => {
    const result = bench(script, '--sclae')
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("Unknown option '--sclae'")
    expect(result.stderr).toContain(`${command} -- [options]`)
    expect(result.stderr).not.toMatch(/\n\s+at /) // no stack trace
  })

  it('refuses an engine it does not know', () => {
    const result = bench(script, '--engine', 'mysql')
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('--engine must be sqlite or postgres (got mysql)')
  })
})

describe('npm run bench:cpu numbers', () => {
  it.each([['--rounds', '0'], ['--requests', 'many'], ['--connections', '2.5']])('refuses %s %s', (option, value) => {
    const result = bench('cpu.ts', option, value)
    expect(result.status).toBe(2)
    expect(result.stderr).toContain(`${option} must be a whole number of at least 1 (got ${value})`)
  })
})
