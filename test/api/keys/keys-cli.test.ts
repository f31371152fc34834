/**
 * `tessera keys` as a child process: a rotation killed with SIGKILL mid-pass
 * loses nothing and is finished by the server; `keys rotate` resumes an
 * unfinished rotation; retirement refuses while anything remains and writes
 * its report after; the vault is refused while a server holds it; the master
 * key rotates in the key file and in TESSERA_MASTER_KEY (through a new key file).
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KeyStatus, TenantKeyStatus } from '../../../src/shared/types'
import { TOKENIZE_MAX_TOKENS } from '../../../src/shared/token-rules'
import { openJson } from '../../../src/main/crypto/aead'
import { encodeMasterKey, generateMasterKey, loadMasterKey, MASTER_KEY_FILE } from '../../../src/main/bootstrap/master-key'
import { readySodium } from '../../../src/main/crypto/sodium'
import { silentLogger } from '../../../src/main/infra/logger'
import type { Actor } from '../../../src/main/domain/actor'
import { unlockKeyring } from '../../../src/main/app/keyring'
import { tokenAssociatedData } from '../../../src/main/app/token-crypto'
import { openVault } from '../../../src/main/bootstrap/vault'
import { run as runCli, start as startCli } from '../../helpers/cli'
import { readerOf } from '../../../src/main/storage/connections'
import { openVaultFile } from '../../helpers/database'

const TOKENS = 4000

/** Waits (polling, no assertion on time) until `condition` holds, for at most `limitMs`. */
async function eventually(condition: () => Promise<boolean> | boolean, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached')
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

describe('tessera keys', { timeout: 180_000 }, () => {
  let root: string
  let dataDir: string
  /** Token id → data, as created. */
  const tokens = new Map<string, unknown>()

  const keys = (args: string[], env: Record<string, string> = {}) => runCli(['keys', ...args, '--data-dir', dataDir], env)
  async function status(env: Record<string, string> = {}): Promise<TenantKeyStatus> {
    const result = await keys(['status', '--json'], env)
    expect(result.stderr).toBe('')
    return (JSON.parse(result.stdout) as KeyStatus).tenants[0]
  }
  const objectsOn = (tenant: TenantKeyStatus, version: number) => tenant.versions.find((entry) => entry.version === version)?.objects

  /** Opens every stored token straight from the database file: each must be on `version` and read as created. */
  async function expectAllTokensOn(version: number): Promise<void> {
    const db = openVaultFile(dataDir)
    try {
      const keyring = await unlockKeyring(readerOf(db), (await loadMasterKey(dataDir, {}))!)
      const rows = await db('tokens').join('tenants', 'tenants.tenant_key', 'tokens.tenant_key').select({ tenant_id: 'tenants.id' }, 'tokens.id', 'key_version', 'sealed_data')
      expect(rows).toHaveLength(TOKENS)
      for (const row of rows) {
        expect(row.key_version).toBe(version)
        expect(openJson(keyring.dataKey(row.tenant_id, version), row.sealed_data, tokenAssociatedData(row.tenant_id, row.id))).toEqual(tokens.get(row.id))
      }
    } finally {
      await db.destroy()
    }
  }

  beforeAll(async () => {
    await readySodium()
    root = await mkdtemp(join(tmpdir(), 'tessera-keys-'))
    dataDir = join(root, 'vault')
    expect((await runCli(['init', '--data-dir', dataDir])).code).toBe(0)
    const vault = await openVault({ dataDir, masterKey: (await loadMasterKey(dataDir, {}))!, logger: silentLogger() })
    const owner: Actor = { type: 'user', id: vault.ownerUserId, tenantId: vault.tenantId, isMember: true, permissions: [], rules: [] }
    const requests = Array.from({ length: TOKENS }, (_, i) => ({ type: 'token', data: { customer: `customer ${i}`, points: i } }))
    for (let start = 0; start < TOKENS; start += TOKENIZE_MAX_TOKENS) {
      const batch = requests.slice(start, start + TOKENIZE_MAX_TOKENS)
      const created = (await vault.services.tokenize.run(owner, batch)) as Array<{ id: string; data: unknown }>
      batch.forEach((request, i) => tokens.set(created[i].id, request.data))
    }
    await vault.services.invitations.create(owner, { email: 'ada@example.com' })
    await vault.close()
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('shows every sealed object on version 1 before any rotation', async () => {
    const tenant = await status()
    expect(tenant).toMatchObject({ current_version: 1, versions: [{ version: 1, current: true, objects: { tokens: TOKENS, outbox_mails: 1, sealed_settings: 0 } }] })
    const text = await keys(['status'])
    expect(text.stdout).toContain(`seals ${TOKENS} tokens, 1 outbox mail`)
  })

  it('loses nothing when `keys rotate` is killed with SIGKILL mid-pass; retire refuses; the server finishes the pass', async () => {
    const rotating = startCli(['keys', 'rotate', '--data-dir', dataDir, '--batch-size', '50'])
    expect(await rotating.lineMatching(/^Re-encrypting onto version 2: \d+ of 4001/)).toBeDefined()
    rotating.child.kill('SIGKILL')
    expect((await rotating.finished).signal).toBe('SIGKILL')

    // `status` reads without the lock the killed process left behind.
    const partial = await status()
    expect(partial.current_version).toBe(2)
    expect(partial.rotation).toMatchObject({ target_version: 2, total: TOKENS + 1 })
    expect(partial.rotation!.finished_at).toBeUndefined()
    const [onOld, onNew] = [objectsOn(partial, 1)!, objectsOn(partial, 2)!]
    expect(onNew.tokens).toBeGreaterThan(0)
    expect(onOld.tokens).toBeGreaterThan(0)
    expect(onOld.tokens + onNew.tokens).toBe(TOKENS)

    // The killed process's lock went with it: the vault opens at once.
    const refused = await keys(['retire', '--version', '1'])
    expect(refused.code).toBe(11)
    expect(refused.stderr).toMatch(/^tessera keys retire: Data key version 1 still seals \d+ tokens, 1 outbox mail; wait until the re-encryption has moved them/)

    const server = startCli(['serve', '--data-dir', dataDir, '--port', '0'])
    expect(await server.lineMatching(/^Tessera listening on/)).toBeDefined()
    const busy = await keys(['rotate'])
    expect(busy.code).toBe(5)
    expect(busy.stderr).toMatch(/^tessera keys rotate: The vault in .* is in use by/)
    await eventually(async () => (await status()).rotation?.finished_at !== undefined, 90_000)
    server.child.kill('SIGTERM')
    expect((await server.finished).code).toBe(0)

    const done = await status()
    expect(objectsOn(done, 1)).toEqual({ tokens: 0, outbox_mails: 0, sealed_settings: 0, token_intents: 0, idempotent_responses: 0 })
    expect(objectsOn(done, 2)).toEqual({ tokens: TOKENS, outbox_mails: 1, sealed_settings: 0, token_intents: 0, idempotent_responses: 0 })
    await expectAllTokensOn(2)
  })

  it('retires version 1 afterwards and writes the report that proves nothing used it', async () => {
    const reportFile = join(root, 'reports', 'retire-v1.json')
    const retired = await keys(['retire', '--version', '1', '--report', reportFile])
    expect(retired.code).toBe(0)
    expect(retired.stdout).toBe(`Data key version 1 retired; its key is deleted. Report: ${reportFile}\n`)
    const report = JSON.parse(await readFile(reportFile, 'utf8'))
    expect(report).toMatchObject({
      report: 'tessera-data-key-retirement',
      retired_version: 1,
      current_version: 2,
      rotation: { target_version: 2, finished_at: expect.any(String) },
      counts_before: { tokens: { 1: TOKENS }, outbox_mails: { 1: 1 }, sealed_settings: {}, token_intents: {}, idempotent_responses: {} },
      counts_after: { tokens: { 1: 0, 2: TOKENS }, outbox_mails: { 1: 0, 2: 1 }, sealed_settings: { 1: 0 }, token_intents: { 1: 0 }, idempotent_responses: { 1: 0 } },
      retired_by: expect.stringMatching(/\(tessera CLI, OS user .+\)$/)
    })
    expect((await stat(reportFile)).mode & 0o777).toBe(0o600)
    expect((await status()).versions[0]).toMatchObject({ version: 1, retired_at: report.retired_at })
    const again = await keys(['retire', '--version', '1'])
    expect(again).toMatchObject({ code: 11, stderr: expect.stringMatching(/^tessera keys retire: Data key version 1 is already retired\.\nhint: `tessera keys status` .+\n$/) })
  })

  it('resumes an unfinished rotation with `keys rotate` instead of starting another', async () => {
    const vault = await openVault({ dataDir, masterKey: (await loadMasterKey(dataDir, {}))!, logger: silentLogger() })
    await vault.services.keys.rotate({ userId: vault.ownerUserId, via: 'test' }, vault.tenantId)
    await vault.close()

    const resumed = await keys(['rotate'])
    expect(resumed.code).toBe(0)
    const lines = resumed.stdout.trim().split('\n')
    expect(lines[0]).toBe(`Resuming the unfinished rotation to data key version 3 (${TOKENS + 1} objects to go).`)
    expect(lines).toContain(`Re-encrypting onto version 3: ${TOKENS + 1} of ${TOKENS + 1} (100%)`)
    expect(lines).toContain('Re-encryption finished: every sealed object is on data key version 3.')
    expect(lines.at(-1)).toBe('Retire version 2 once it is no longer needed: tessera keys retire --version 2')
    expect((await status()).current_version).toBe(3)
    await expectAllTokensOn(3)
  })

  it('rotates the master key in master.key: the old key is refused, the new one opens every token', async () => {
    const old = await readFile(join(dataDir, MASTER_KEY_FILE), 'utf8')
    const rotated = await keys(['rotate-master'])
    expect(rotated.code).toBe(0)
    expect(rotated.stdout).toMatch(/^Master key rotated; new key check value [0-9a-f]{16}\.\n.*master\.key holds the new key/)
    const current = await readFile(join(dataDir, MASTER_KEY_FILE), 'utf8')
    expect(current).not.toBe(old)
    expect((await stat(join(dataDir, MASTER_KEY_FILE))).mode & 0o777).toBe(0o600)

    const withOld = await keys(['status'], { TESSERA_MASTER_KEY: old.trim() })
    expect(withOld.code).toBe(3)
    expect(withOld.stderr).toMatch(/^tessera keys status: Cannot unlock vault: the master key does not match this vault\./)
    expect((await status()).current_version).toBe(3)
    await expectAllTokensOn(3)
    // The audit keys moved to the new master key too: the whole chain, ceremonies included, verifies with it.
    const verified = await runCli(['logs', 'verify', '--data-dir', dataDir])
    expect(verified.code).toBe(0)
    expect(verified.stdout).toMatch(/^Audit log intact: \d+ entries/)
  })

  it('refuses bad options with exit code 2 and a message naming them', async () => {
    expect(await keys(['retire'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--version N is required/) })
    expect(await keys(['rotate', '--batch-size', '0'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--batch-size must be a whole number from 1 to 5000/) })
    expect(await keys(['spin'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/Unknown command "keys spin"/) })
    expect(await keys(['rotate-master', '--new-key-file', join(root, 'x.key')])).toMatchObject({ code: 2, stderr: expect.stringMatching(/only for a master key in TESSERA_MASTER_KEY/) })
    const help = await runCli(['keys', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/rotate-master/)
    const rotateHelp = await runCli(['keys', 'rotate', '--help'])
    expect(rotateHelp.code).toBe(0)
    expect(rotateHelp.stdout).toMatch(/^Usage: tessera keys rotate \[--data-dir DIR\] \[--database-url URL\] \[--batch-size N\]/)
    expect(await runCli(['keys'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^Usage: tessera keys <command>/) })
  })
})

describe('tessera keys rotate-master with TESSERA_MASTER_KEY', { timeout: 60_000 }, () => {
  let root: string

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-keys-env-'))
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('needs --new-key-file, writes the new key there (0600) before switching, and only the new key opens the vault', async () => {
    const dataDir = join(root, 'vault')
    const old = encodeMasterKey(generateMasterKey()).trim()
    expect((await runCli(['init', '--data-dir', dataDir], { TESSERA_MASTER_KEY: old })).code).toBe(0)
    expect(existsSync(join(dataDir, MASTER_KEY_FILE))).toBe(false)

    const without = await runCli(['keys', 'rotate-master', '--data-dir', dataDir], { TESSERA_MASTER_KEY: old })
    expect(without).toMatchObject({ code: 2, stderr: expect.stringMatching(/give --new-key-file FILE/) })

    const file = join(root, 'new-master.key')
    const rotated = await runCli(['keys', 'rotate-master', '--data-dir', dataDir, '--new-key-file', file], { TESSERA_MASTER_KEY: old })
    expect(rotated.code).toBe(0)
    expect(rotated.stdout).toContain(`The new master key is in ${file}. Put its content into TESSERA_MASTER_KEY now`)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    const next = (await readFile(file, 'utf8')).trim()
    expect(rotated.stdout).not.toContain(next)

    expect((await runCli(['keys', 'status', '--data-dir', dataDir], { TESSERA_MASTER_KEY: old })).stderr).toMatch(/Cannot unlock vault/)
    expect((await runCli(['keys', 'status', '--data-dir', dataDir], { TESSERA_MASTER_KEY: next })).code).toBe(0)
    const again = await runCli(['keys', 'rotate-master', '--data-dir', dataDir, '--new-key-file', file], { TESSERA_MASTER_KEY: next })
    expect(again).toMatchObject({ code: 2, stderr: expect.stringMatching(/already exists/) })
  })
})

describe('tessera serve with TESSERA_CVC_RETENTION', { timeout: 60_000 }, () => {
  it('refuses a malformed value, naming the variable, before serving', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tessera-cvc-'))
    try {
      const dataDir = join(root, 'vault')
      expect((await runCli(['init', '--data-dir', dataDir])).code).toBe(0)
      const result = await runCli(['serve', '--data-dir', dataDir, '--port', '0'], { TESSERA_CVC_RETENTION: '1 hour' })
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(/TESSERA_CVC_RETENTION must be a whole number of seconds \(3600\) or an ISO 8601 duration \(PT1H\)/)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })
})
