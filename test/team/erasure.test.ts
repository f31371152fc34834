/**
 * Erasure on a team vault: PostgreSQL keeps a deleted row's old versions (dead
 * tuples, the WAL, backups), so what makes a deleted token unrecoverable is
 * its key. A copy of its row taken before the delete, as a backup holds it,
 * opens while its key version lives, and no longer once `tessera keys rotate`
 * and `tessera keys retire` have run. A backup of the whole database keeps the
 * old data key too, wrapped by the master key: it opens the copy until the
 * master key is rotated (and the old one destroyed).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { unlockKeyring } from '../../src/main/app/keyring'
import { openToken } from '../../src/main/app/token-crypto'
import { startServiceHost } from '../../src/main/bootstrap/service-host'
import { initVault } from '../../src/main/bootstrap/vault'
import { decodeMasterKey } from '../../src/main/bootstrap/master-key'
import { generateMasterKey } from '../../src/main/crypto/keys'
import type { MasterKey } from '../../src/main/crypto/types'
import { readySodium } from '../../src/main/crypto/sodium'
import { silentLogger } from '../../src/main/infra/logger'
import { openDatabase } from '../../src/main/storage/database'
import { openVaultFile, teamDatabases } from '../helpers/database'
import { run } from '../helpers/cli'
import { copyTestDatabase, createTestDatabase } from '../helpers/postgres'

type TokenRow = Parameters<typeof openToken>[1]

/** A token's row as a backup holds it, with its tenant's id (the row holds the tenant's key); undefined once it is deleted. */
async function tokenRowOf(dataDir: string, id: string): Promise<TokenRow | undefined> {
  const direct = openVaultFile(dataDir)
  try {
    return await direct('tokens').join('tenants', 'tenants.tenant_key', 'tokens.tenant_key').select('tokens.*', { tenant_id: 'tenants.id' }).where({ 'tokens.id': id }).first()
  } finally {
    await direct.destroy()
  }
}

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

  /** Opens a row with every key the database at `url` holds, unwrapped with `master`. */
  async function openWithKeysOf(url: string, master: MasterKey, row: TokenRow): Promise<unknown> {
    const db = await openDatabase(url, { readers: 1 })
    try {
      return openToken(await unlockKeyring(db.reader, master), row)
    } finally {
      await db.close()
    }
  }
  /** Opens a row with every key the vault holds now. */
  const openWithTheVaultsKeys = (row: TokenRow) => openWithKeysOf(database.url, masterKey, row)

  it('leaves a deleted token readable from a backup copy until its key version is retired, and unreadable after', async () => {
    const admin = await initVault({ dataDir, databaseUrl: database.url, masterKey, tenantName: 'Team' })
    const host = await startServiceHost({ dataDir, databaseUrl: database.url, masterKey, host: '127.0.0.1', port: 0, logger: silentLogger(), jobTickMs: 0 })
    const api = async (key: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(host.url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
      return { status: response.status, body: response.status === 204 ? undefined : ((await response.json()) as Record<string, any>) }
    }
    const card = { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 }
    let backup: TokenRow
    try {
      const app = await api(admin.application.key, 'POST', '/applications', { name: 'Payments', type: 'private', permissions: ['token:create', 'token:delete'] })
      const created = await api(app.body!.key, 'POST', '/tokens', { type: 'card', data: card })
      expect(created.status).toBe(201)
      await host.vault.services.context.writes.idle()
      backup = (await tokenRowOf(dataDir, created.body!.id))!
      expect((await api(app.body!.key, 'DELETE', `/tokens/${created.body!.id}`)).status).toBe(204)
      await host.vault.services.context.writes.idle()
      expect(await tokenRowOf(dataDir, created.body!.id)).toBeUndefined()
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

  it('leaves it readable from a backup of the whole database, which holds the old key, until the master key is rotated', async () => {
    // A vault of its own: the first test has rotated and retired in the other.
    const dir = await mkdtemp(join(tmpdir(), 'tessera-erasure-'))
    const vault = await createTestDatabase()
    teamDatabases.set(dir, vault.url)
    const ceremony = (...args: string[]) => run(['keys', ...args, '--data-dir', dir, '--database-url', vault.url], env())
    /** Runs `work` against the vault's REST service, stopped afterwards (a database with connections cannot be copied). */
    const served = async <T>(work: (call: (key: string, method: string, path: string, body?: unknown) => Promise<Response>) => Promise<T>): Promise<T> => {
      const host = await startServiceHost({ dataDir: dir, databaseUrl: vault.url, masterKey, host: '127.0.0.1', port: 0, logger: silentLogger(), jobTickMs: 0 })
      try {
        const result = await work((key, method, path, body) => fetch(host.url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) }))
        await host.vault.services.context.writes.idle()
        return result
      } finally {
        await host.stop()
      }
    }
    let backup: { url: string; drop(): Promise<void> } | undefined
    try {
      const admin = await initVault({ dataDir: dir, databaseUrl: vault.url, masterKey, tenantName: 'Team' })
      const { key, id } = await served(async (call) => {
        const app = (await (await call(admin.application.key, 'POST', '/applications', { name: 'Payments', type: 'private', permissions: ['token:create', 'token:delete'] })).json()) as { key: string }
        const created = await call(app.key, 'POST', '/tokens', { type: 'token', data: 'erased later' })
        expect(created.status).toBe(201)
        return { key: app.key, id: ((await created.json()) as { id: string }).id }
      })
      const row = (await tokenRowOf(dir, id))!
      // Backed up with the token, which is then deleted, its key version rotated away and retired.
      backup = await copyTestDatabase(vault.url)
      await served(async (call) => expect((await call(key, 'DELETE', `/tokens/${id}`)).status).toBe(204))
      expect((await ceremony('rotate')).code).toBe(0)
      expect((await ceremony('retire', '--version', String(row.key_version), '--json')).code).toBe(0)
      await expect(openWithKeysOf(vault.url, masterKey, row)).rejects.toThrow(`No data key version ${row.key_version}`)
      // The backup's own wrapped copy of the retired key still opens the row, with the master key of its time.
      expect(await openWithKeysOf(backup.url, masterKey, row)).toBe('erased later')

      const newKeyFile = join(dir, 'new-master.key')
      expect((await ceremony('rotate-master', '--new-key-file', newKeyFile)).code).toBe(0)
      const newMasterKey = decodeMasterKey((await readFile(newKeyFile, 'utf8')).trim(), newKeyFile)
      // The master key now in use opens nothing of the backup: once the old one is destroyed, nobody can.
      await expect(openWithKeysOf(backup.url, newMasterKey, row)).rejects.toThrow('does not match')
    } finally {
      await backup?.drop()
      teamDatabases.delete(dir)
      await vault.drop()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
