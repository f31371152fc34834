/**
 * Master-key rotation re-wraps every key under a new master key; a crash at
 * any step (simulated by stopping the rotation where it stands and abandoning
 * the open vault) leaves a key file that opens the vault and every token.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMasterKeyFile, encodeMasterKey, generateMasterKey, loadMasterKey, MASTER_KEY_FILE, replaceMasterKeyFile } from '../../src/main/bootstrap/master-key'
import { readySodium } from '../../src/main/crypto/sodium'
import type { MasterKey } from '../../src/main/crypto/types'
import { silentLogger } from '../../src/main/infra/logger'
import type { Actor } from '../../src/main/domain/actor'
import type { MasterRotationStep } from '../../src/main/app/keys.service'
import { initVault, openVault, type Vault } from '../../src/main/bootstrap/vault'
import { sql } from '../../src/main/storage/connections'

/** Thrown by a fault-injection hook: the rotation stops there, as if the process died. */
class Crash extends Error {}

describe('master-key rotation', () => {
  let dataDir: string
  const tokens = new Map<string, unknown>()

  const open = async (masterKey: MasterKey) => openVault({ dataDir, masterKey, logger: silentLogger() })
  const openWithKeyFile = async () => open((await loadMasterKey(dataDir, {}))!)
  const owner = (vault: Vault): Actor => ({ type: 'user', id: vault.ownerUserId, tenantId: vault.tenantId, isMember: true, permissions: [], rules: [] })
  const actor = (vault: Vault) => ({ userId: vault.ownerUserId, via: 'test' })

  /** Every token reads back as created. */
  async function expectTokensReadable(vault: Vault): Promise<void> {
    for (const [id, data] of tokens) expect((await vault.services.tokens.reveal(owner(vault), id, 'rotation check')).data).toEqual(data)
  }

  async function stagedWrappings(vault: Vault): Promise<number> {
    const [vaultRow] = await sql(vault.db.reader)('vault').whereNotNull('wrapped_secret_hash_key_next')
    const keys = await sql(vault.db.reader)('tenant_keys').whereNotNull('wrapped_key_next')
    return (vaultRow ? 1 : 0) + keys.length
  }

  async function masterLogs(vault: Vault): Promise<string[]> {
    const rows = await sql(vault.db.reader)('logs').where({ entity_type: 'key', entity_id: 'master-key' }).orderBy('seq')
    return rows.map((row) => row.message)
  }

  /** Rotates the key file's master key, stopping (as a crash would) after `crashAfter`. */
  async function rotate(vault: Vault, next: MasterKey, crashAfter?: MasterRotationStep) {
    return vault.services.keys.rotateMaster(actor(vault), next, (key) => replaceMasterKeyFile(dataDir, key), async (step) => {
      if (step === crashAfter) throw new Crash(step)
    })
  }

  beforeEach(async () => {
    await readySodium()
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-master-'))
    const masterKey = await createMasterKeyFile(dataDir)
    await initVault({ dataDir, masterKey, tenantName: 'Acme' })
    const vault = await open(masterKey)
    tokens.clear()
    for (const data of ['one', { two: 2 }, ['three']]) {
      const token = await vault.services.tokens.create(owner(vault), { type: 'token', data })
      tokens.set(token.token.id, data)
    }
    await vault.close()
  })
  afterEach(() => rm(dataDir, { recursive: true, force: true }))

  it('re-wraps every key: the new key file opens the vault and reads every token, the old key fails', async () => {
    const old = (await loadMasterKey(dataDir, {}))!
    const vault = await open(old)
    const next = generateMasterKey()
    const result = await rotate(vault, next)
    expect(result.key_check_value).toMatch(/^[0-9a-f]{16}$/)
    // The running vault goes on working, and seals new keys under the new master.
    await vault.services.keys.rotate(actor(vault), vault.tenantId)
    await expectTokensReadable(vault)
    expect(await masterLogs(vault)).toEqual(['Master key rotated: every key is now wrapped under the new master key (test)'])
    await vault.close()

    expect(await readFile(join(dataDir, MASTER_KEY_FILE), 'utf8')).toBe(encodeMasterKey(next))
    await expect(open(old)).rejects.toThrow('Cannot unlock vault: the master key does not match this vault.')
    const reopened = await openWithKeyFile()
    await expectTokensReadable(reopened)
    expect(await stagedWrappings(reopened)).toBe(0)
    await reopened.close()
  })

  it('survives a crash after staging, before the key file changed: the old key opens and the rotation is undone', async () => {
    const old = (await loadMasterKey(dataDir, {}))!
    const vault = await open(old)
    const next = generateMasterKey()
    await expect(rotate(vault, next, 'staged')).rejects.toBeInstanceOf(Crash)
    expect(await stagedWrappings(vault)).toBeGreaterThan(0)
    await vault.close()
    // A half-written temporary key file from the interrupted rename is ignored.
    await writeFile(join(dataDir, `${MASTER_KEY_FILE}.tmp`), encodeMasterKey(next).slice(0, 10), { mode: 0o600 })

    const reopened = await openWithKeyFile()
    await expectTokensReadable(reopened)
    expect(await stagedWrappings(reopened)).toBe(0)
    expect(await masterLogs(reopened)).toEqual(['Master key rotation abandoned: the new master key was never stored; the vault stays under its master key'])
    await reopened.close()
    await expect(open(next)).rejects.toThrow(/Cannot unlock vault/)
  })

  it('survives a crash after the key file changed, before the last commit: the new key opens and the rotation completes', async () => {
    const old = (await loadMasterKey(dataDir, {}))!
    const vault = await open(old)
    const next = generateMasterKey()
    await expect(rotate(vault, next, 'stored')).rejects.toBeInstanceOf(Crash)
    await vault.close()

    expect(await loadMasterKey(dataDir, {})).toEqual(next)
    const reopened = await openWithKeyFile()
    await expectTokensReadable(reopened)
    expect(await stagedWrappings(reopened)).toBe(0)
    expect(await masterLogs(reopened)).toEqual(['Master key rotation completed: the vault was opened with the new master key'])
    await reopened.close()
    await expect(open(old)).rejects.toThrow('Cannot unlock vault: the master key does not match this vault.')
  })

  it('undoes the staging at once when the new key cannot be stored, and keeps working under the old key', async () => {
    const old = (await loadMasterKey(dataDir, {}))!
    const vault = await open(old)
    const failing = vault.services.keys.rotateMaster(actor(vault), generateMasterKey(), async () => {
      throw Object.assign(new Error('disk full'), { code: 'ENOSPC' })
    })
    await expect(failing).rejects.toMatchObject({ code: 'ENOSPC' })
    expect(await stagedWrappings(vault)).toBe(0)
    await vault.services.keys.rotate(actor(vault), vault.tenantId)
    await vault.close()
    const reopened = await open(old)
    await expectTokensReadable(reopened)
    await reopened.close()
  })
})
