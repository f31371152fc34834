import { spawnSync } from 'node:child_process'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..', '..')
const canPin = cpus().length >= 2 && spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0

function runFixture(env: Record<string, string> = {}): { pinned: boolean; summary: string; loadGenerator: string; server: string } {
  const result = spawnSync(process.execPath, ['bin/run-ts.cjs', 'test/bench/fixtures/pinning.ts'], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' })
  expect(result.status, result.stderr).toBe(0)
  return JSON.parse(result.stdout.trim())
}

describe('benchmark pinning', () => {
  it.skipIf(!canPin)('runs servers on CPU 0 and the load generator on CPU 1, and says so', () => {
    const outcome = runFixture()
    expect(outcome).toMatchObject({ pinned: true, loadGenerator: '1', server: '0' })
    expect(outcome.summary).toMatch(/^server pinned to CPU 0, load generator to CPU 1/)
  })

  it('says why nothing is pinned when pinning is turned off', () => {
    const outcome = runFixture({ BENCH_PIN: '0' })
    expect(outcome.pinned).toBe(false)
    expect(outcome.summary).toBe('not pinned: BENCH_PIN=0')
    expect(outcome.server).toBe(outcome.loadGenerator)
  })
})
