/**
 * A team vault's PostgreSQL server that cannot be reached: one clear line,
 * its own exit code, no stack trace and never the URL's password.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../helpers/cli'

const PASSWORD = 'pa55-w0rd-never-printed'
const SERVER = new URL(process.env.TESSERA_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test')

describe('team vault database failures', { timeout: 120_000 }, () => {
  let dataDir: string

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-team-errors-'))
  })
  afterAll(() => rm(dataDir, { recursive: true, force: true }))

  function expectClearFailure(result: { code: number | null; stdout: string; stderr: string }, command: string, cause: string): void {
    expect(result.code, result.stderr).toBe(15)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(new RegExp(`^tessera ${command}: Cannot reach the team database: ${cause}\\.\\nhint: [^\\n]+\\n$`))
    expect(result.stderr).not.toContain(PASSWORD)
  }

  it('a refused connection (init, keys status, serve)', async () => {
    const url = `postgres://postgres:${PASSWORD}@127.0.0.1:44999/tessera`
    expectClearFailure(await run(['init', '--data-dir', dataDir, '--database-url', url]), 'init', 'the connection to 127\\.0\\.0\\.1:44999 was refused')
    expectClearFailure(await run(['keys', 'status', '--data-dir', dataDir, '--database-url', url]), 'keys status', 'the connection to 127\\.0\\.0\\.1:44999 was refused')
    expectClearFailure(await run(['serve', '--data-dir', dataDir, '--port', '0', '--database-url', url], { TESSERA_LOG_LEVEL: 'info' }), 'serve', 'the connection to 127\\.0\\.0\\.1:44999 was refused')
  })

  it('a database that does not exist', async () => {
    const url = new URL(SERVER)
    url.password = PASSWORD
    url.pathname = `/tessera_missing_${process.pid}`
    expectClearFailure(await run(['init', '--data-dir', dataDir, '--database-url', url.toString()]), 'init', 'the database does not exist')
  })
})
