/**
 * Erasure on a team vault: PostgreSQL keeps a deleted row's old versions (dead
 * tuples, the WAL, backups), so what makes a deleted token unrecoverable is
 * its key. A copy of its row taken before the delete, as a backup holds it,
 * opens while its key version lives, and no longer once `tessera keys rotate`
 * and `tessera keys retire` have run.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { unlockKeyring } from '../../src/main/app/keyring'
import { openToken } from '../../src/main/app/token-crypto'
import { startServiceHost } from '../../src/main/bootstrap/service-host'
import { initVault } from '../../src/main/bootstrap/vault'
import { generateMasterKey } from '../../src/main/crypto/keys'
import { readySodium } from '../../src/main/crypto/sodium'
import { silentLogger } from '../../src/main/infra/logger'
import { openDatabase } from '../../src/main/storage/database'
import { openVaultFile, teamDatabases } from '../helpers/database'
import { run } from '../helpers/cli'
import { createTestDatabase } from '../helpers/postgres'

describe('erasure on a team vault', { timeout: 120_000 }, () => {
  const masterKey = generateMasterKey()
  const env = () => ({ TESSERA_MASTER_KEY: Buffer.from(masterKey).toString('base64') })
  let dataDir: string
  let database: { url: string; drop(): Promise<void> }

  beforeAll(async () => {
    await readySodium()
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-erasure-'))
    database = await createTestDatabase()
    teamDatabases.set(dataDir, database.url)
  })
  afterAll(async () => {
    teamDatabases.delete(dataDir)
    await database.drop()
    await rm(dataDir, { recursive: true, force: true })
  })

  /** Opens a row with every key the vault holds now. */
  async function openWithTheVaultsKeys(row: Parameters<typeof openToken>[1]): Promise<unknown> {
    const db = await openDatabase(database.url, { readers: 1 })
    try {
      return openToken(await unlockKeyring(db.reader, masterKey), row)
    } finally {
      await db.close()
    }
  }

  it('leaves a deleted token readable from a backup copy until its key version is retired, and unreadable after', async () => {
    const admin = await initVault({ dataDir, databaseUrl: database.url, masterKey, tenantName: 'Team' })
    const host = await startServiceHost({ dataDir, databaseUrl: database.url, masterKey, host: '127.0.0.1', port: 0, logger: silentLogger(), jobTickMs: 0 })
    const api = async (key: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(host.url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
      return { status: response.status, body: response.status === 204 ? undefined : ((await response.json()) as Record<string, any>) }
    }
    const card = { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 }
    let backup: Parameters<typeof openToken>[1]
    try {
      const app = await api(admin.application.key, 'POST', '/applications', { name: 'Payments', type: 'private', permissions: ['token:create', 'token:delete'] })
      const created = await api(app.body!.key, 'POST', '/tokens', { type: 'card', data: card })
      expect(created.status).toBe(201)
      await host.vault.services.context.writes.idle()
      const direct = openVaultFile(dataDir)
      try {
        // The row as a backup holds it, with its tenant's id (the row holds the tenant's key).
        backup = await direct('tokens').join('tenants', 'tenants.tenant_key', 'tokens.tenant_key').select('tokens.*', { tenant_id: 'tenants.id' }).where({ 'tokens.id': created.body!.id }).first()
        expect((await api(app.body!.key, 'DELETE', `/tokens/${created.body!.id}`)).status).toBe(204)
        await host.vault.services.context.writes.idle()
        expect(await direct('tokens').where({ id: created.body!.id }).first()).toBeUndefined()
      } finally {
        await direct.destroy()
      }
    } finally {
      await host.stop()
    }

    // The copy still opens: deleting the row alone does not erase what a backup holds.
    expect(await openWithTheVaultsKeys(backup)).toMatchObject({ number: card.number })

    const rotated = await run(['keys', 'rotate', '--data-dir', dataDir, '--database-url', database.url], env())
    expect(rotated.code).toBe(0)
    const retired = await run(['keys', 'retire', '--data-dir', dataDir, '--database-url', database.url, '--version', String(backup.key_version), '--json'], env())
    expect(retired.code).toBe(0)

    await expect(openWithTheVaultsKeys(backup)).rejects.toThrow(`No data key version ${backup.key_version}`)
  })
})
