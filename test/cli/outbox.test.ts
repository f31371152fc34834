import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../../src/main/storage/connections'
import { startTestService, type TestService } from '../helpers/service'

const run = promisify(execFile)
const BIN = join(__dirname, '../../bin/tessera.cjs')

describe('tessera outbox', () => {
  let service: TestService
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    service = await startTestService()
    env = { ...process.env, TESSERA_MASTER_KEY: Buffer.from(service.masterKey).toString('base64') }
    expect((await service.request('POST', '/tenants/self/invitations', { body: { email: 'offline@example.com' } })).status).toBe(201)
    await service.host.vault.services.context.writes.idle()
  })
  afterAll(() => service.stop())

  it('lists waiting mail with its decrypted link as JSON, while the service runs', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'outbox', '--data-dir', service.dataDir, '--json'], { env })
    const { mails } = JSON.parse(stdout)
    expect(mails).toEqual([
      expect.objectContaining({
        status: 'PENDING',
        recipient: 'offline@example.com',
        subject: 'Invitation to join Test tenant on Tessera',
        attempts: 0,
        last_error: null,
        sent_at: null,
        link: expect.stringMatching(new RegExp(`^${service.url}/invitations/accept\\?token=inv_`))
      })
    ])
    const token = new URL(mails[0].link).searchParams.get('token')
    const accepted = await service.request('POST', '/invitations/accept', { key: null, body: { token, first_name: 'Off', last_name: 'Line' } })
    expect(accepted.status).toBe(201)
  })

  it('prints a readable list without --json', async () => {
    expect((await service.request('POST', '/tenants/self/invitations', { body: { email: 'reader@example.com' } })).status).toBe(201)
    await service.host.vault.services.context.writes.idle()
    const { stdout } = await run(process.execPath, [BIN, 'outbox', '--data-dir', service.dataDir], { env })
    expect(stdout).toContain('Outbox: 1 waiting, 0 sent')
    expect(stdout).toContain('WAITING')
    expect(stdout).toContain('to reader@example.com')
    expect(stdout).toMatch(/Link: +http:\/\/127\.0\.0\.1:\d+\/invitations\/accept\?token=inv_/)
  })

  it('prints names from the vault with their control characters escaped, so they cannot forge lines', async () => {
    // A tenant name written before names were refused control characters.
    const forged = 'Acme\n  Link:    https://evil.example/\u001b[8m'
    await service.host.vault.services.context.writes.run((trx) => sql(trx)('tenants').update({ name: forged }))
    expect((await service.request('POST', '/tenants/self/invitations', { body: { email: 'forged@example.com' } })).status).toBe(201)
    await service.host.vault.services.context.writes.idle()
    const { stdout } = await run(process.execPath, [BIN, 'outbox', '--data-dir', service.dataDir], { env })
    expect(stdout).not.toContain('\u001b')
    expect(stdout).not.toMatch(/^ +Link: +https:\/\/evil/m)
    expect(stdout).toContain('Acme\\u000a  Link:    https://evil.example/\\u001b[8m')
  })

  it('fails with exit code 3 and a clear message where there is no vault', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'tessera-empty-'))
    try {
      const failure = await run(process.execPath, [BIN, 'outbox', '--data-dir', empty], { env }).catch((error) => error)
      expect(failure.code).toBe(3)
      expect(failure.stderr).toMatch(/^tessera outbox: No vault in .*\nhint: create one with `tessera init/)
    } finally {
      await rm(empty, { recursive: true, force: true })
    }
  })
})
