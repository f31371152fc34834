/**
 * On a team vault's PostgreSQL database, the tables written per token or per
 * audit entry hold their tenant key without a foreign key to `tenants` (whose
 * per-row check locks the tenant's row); a deleted token still takes its
 * search indexes with it; the migration rolls back to the checked schema and
 * applies again. A file vault (SQLite) keeps its foreign keys.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresConnection } from '../../src/main/storage/dialect'
import { migrationSource } from '../../src/main/storage/migrations'
import { createTestDatabase } from '../helpers/postgres'

const HOT_TABLES = ['log_counts', 'log_entities', 'log_hour_counts', 'logs', 'token_counts', 'token_metadata', 'token_search_indexes', 'tokens']
const TENANT_KEY = 1
const UNKNOWN_TENANT_KEY = 99

describe('the hot tables\' tenant foreign keys on PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> }
  let db: Knex

  beforeAll(async () => {
    database = await createTestDatabase()
    db = knex({ client: 'pg', connection: postgresConnection(database.url), migrations: { migrationSource } })
  })
  afterAll(async () => {
    await db?.destroy()
    await database?.drop()
  })

  /** The tables that reference `tenants`, and what each of their references is. */
  async function foreignKeys(): Promise<{ table: string; references: string; definition: string }[]> {
    const { rows } = await db.raw(
      `SELECT conrelid::regclass::text AS table, confrelid::regclass::text AS references, pg_get_constraintdef(oid) AS definition
         FROM pg_constraint WHERE contype = 'f' ORDER BY 1, 3`
    )
    return rows
  }

  const hotTablesReferencingTenants = async () => (await foreignKeys()).filter((key) => key.references === 'tenants' && HOT_TABLES.includes(key.table))
  const insertLog = (tenantKey: number) =>
    db('logs').insert({ tenant_key: tenantKey, entity_type: 'token', entity_id: 'a', operation: 'read', message: 'm', created_at: 1 })

  it('drops them, keeps the search indexes\' cascade from tokens, rolls back and applies again', async () => {
    await db.migrate.latest()
    await db('tenants').insert({ id: '00000000-0000-4000-8000-000000000001', name: 'T', created_at: 0, tenant_key: TENANT_KEY })
    expect(await hotTablesReferencingTenants()).toEqual([])
    expect(await foreignKeys()).toContainEqual({
      table: 'token_search_indexes',
      references: 'tokens',
      definition: 'FOREIGN KEY (tenant_key, token_id) REFERENCES tokens(tenant_key, id) ON DELETE CASCADE'
    })
    await insertLog(UNKNOWN_TENANT_KEY) // nothing checks the key any more: the service writes only its tenants' keys
    await db('logs').where('tenant_key', UNKNOWN_TENANT_KEY).delete()

    const token = { tenant_key: TENANT_KEY, id: 'a', type: 'token', key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.alloc(32), fingerprint_expression: '', containers: '[]', metadata: '{}', created_at: 1 }
    await db('tokens').insert(token)
    await db('token_search_indexes').insert({ tenant_key: TENANT_KEY, token_id: 'a', index_hash: Buffer.alloc(32), created_at: 1 })
    await db('tokens').where({ tenant_key: TENANT_KEY, id: 'a' }).delete()
    expect(await db('token_search_indexes').pluck('token_id')).toEqual([])

    while (Number(await db.migrate.currentVersion()) >= 20261223000000) await db.migrate.down()
    expect(await hotTablesReferencingTenants()).toEqual(HOT_TABLES.map((table) => ({ table, references: 'tenants', definition: 'FOREIGN KEY (tenant_key) REFERENCES tenants(tenant_key) ON DELETE CASCADE' })))
    await expect(insertLog(UNKNOWN_TENANT_KEY)).rejects.toThrow(/foreign key/)

    await db.migrate.latest()
    expect(await hotTablesReferencingTenants()).toEqual([])
  })
})

describe('the hot tables\' tenant foreign keys on SQLite', () => {
  it('are kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-foreign-keys-'))
    const db = knex({ client: 'sqlite3', connection: { filename: join(dir, 'v.db') }, useNullAsDefault: true, migrations: { migrationSource } })
    try {
      await db.migrate.latest()
      for (const table of HOT_TABLES) {
        const keys: { table: string; from: string }[] = await db.raw(`PRAGMA foreign_key_list(${table})`)
        expect(keys, table).toContainEqual(expect.objectContaining({ table: 'tenants', from: 'tenant_key' }))
      }
    } finally {
      await db.destroy()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
