/**
 * The compact storage layout's migrations on a team vault's PostgreSQL
 * database holding data: tenant keys, binary hashes and actor ids, metadata in
 * one tree, actor type codes, default fingerprint expressions. Every row comes
 * through, tokens keep their insertion order (`seq`, the lists' tie-break
 * there), new rows continue the sequences, and the migrations roll back and
 * apply again.
 */
import { randomUUID } from 'node:crypto'
import knex, { type Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readerOf } from '../../src/main/storage/connections'
import { postgresConnection } from '../../src/main/storage/dialect'
import { migrationSource } from '../../src/main/storage/migrations'
import { countLogs, countLogsByPeriod, listLogs } from '../../src/main/storage/repositories/logs.repository'
import { findByFingerprint, findToken, listTokens } from '../../src/main/storage/repositories/tokens.repository'
import { loadTenantKeys } from '../../src/main/storage/tenant-keys'
import { createTestDatabase } from '../helpers/postgres'

const LAST_OF_MAIN_LAYOUT = 20261213000000
/** The last version with the `log_entities` table on PostgreSQL (the next finds an entity's entries through an index on `logs`). */
const LAST_WITH_ENTITY_TABLE = 20261224000000
const HOUR = 3_600_000

describe('the compact layout migrations on PostgreSQL', () => {
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

  it('converts every row, keeps the tokens\' order and sequences, rolls back and applies again', async () => {
    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < LAST_OF_MAIN_LAYOUT) await db.migrate.up()
    const [t, u, actor] = [randomUUID(), randomUUID(), randomUUID()]
    await db('tenants').insert([{ id: u, name: 'Later', created_at: 5 }, { id: t, name: 'First', created_at: 1 }])
    const fingerprint = (id: string) => Buffer.alloc(32, id).toString('hex')
    const token = (tenant: string, id: string, type: string, expression: string) => ({
      tenant_id: tenant, id, type, key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: fingerprint(id), fingerprint_expression: expression,
      containers: '[]', metadata: JSON.stringify({ k: id.toUpperCase() }), created_by: actor, created_at: 7
    })
    // Inserted one by one, so that `seq` numbers them in this order.
    for (const row of [token(t, 'b', 'token', '{{ data | stringify }}'), token(u, 'c', 'card', '{{ data.number }}'), token(t, 'a', 'bank', '')]) await db('tokens').insert(row)
    await db('token_search_indexes').insert({ tenant_id: t, token_id: 'a', index_hash: '0f'.repeat(32) })
    await db('token_metadata').insert(['b', 'c', 'a'].map((id) => ({ tenant_id: id === 'c' ? u : t, token_id: id, key: 'k', value_folded: id, created_at: 7 })))
    await db('token_counts').insert([{ tenant_id: t, type: 'token', count: 1 }, { tenant_id: t, type: 'bank', count: 1 }, { tenant_id: u, type: 'card', count: 1 }])
    const entry = (tenant: string, seq: number, actorType: string | null) => ({
      seq, tenant_id: tenant, actor_id: actorType && actor, actor_type: actorType, entity_type: 'token', entity_id: 'a', operation: 'read', message: 'm', created_at: seq * HOUR, mac: Buffer.alloc(32, seq)
    })
    await db('logs').insert([entry(t, 1, 'application'), entry(u, 2, null), entry(t, 3, 'user')])
    await db('log_counts').insert([{ tenant_id: t, entity_type: 'token', count: 2 }, { tenant_id: u, entity_type: 'token', count: 1 }])
    await db('log_hour_counts').insert([1, 2, 3].map((seq) => ({ tenant_id: seq === 2 ? u : t, hour: seq, entity_type: 'token', count: 1 })))
    await db('log_entities').insert({ tenant_id: t, entity_type: 'token', entity_id: 'a', created_at: HOUR, seq: 1 })
    await db('log_entity_index').update({ folded_through: 1 })

    while (Number(await db.migrate.currentVersion()) < LAST_WITH_ENTITY_TABLE) await db.migrate.up()
    expect(await db('log_entities').select('*')).toEqual([{ tenant_key: 1, entity_type: 'token', entity_id: 'a', created_at: HOUR, seq: 1 }])
    await db.migrate.latest()
    await expectCompactLayout(t, u, actor)

    while (Number(await db.migrate.currentVersion()) > LAST_OF_MAIN_LAYOUT) await db.migrate.down()
    expect(await db('tokens').select('tenant_id', 'id', 'fingerprint', 'fingerprint_expression', 'created_by').orderBy('seq')).toEqual([
      { tenant_id: t, id: 'b', fingerprint: fingerprint('b'), fingerprint_expression: '{{ data | stringify }}', created_by: actor },
      { tenant_id: u, id: 'c', fingerprint: fingerprint('c'), fingerprint_expression: '{{ data.number }}', created_by: actor },
      { tenant_id: t, id: 'a', fingerprint: fingerprint('a'), fingerprint_expression: '', created_by: actor }
    ])
    expect(await db('logs').select('tenant_id', 'actor_id', 'actor_type').orderBy('seq')).toEqual([
      { tenant_id: t, actor_id: actor, actor_type: 'application' },
      { tenant_id: u, actor_id: null, actor_type: null },
      { tenant_id: t, actor_id: actor, actor_type: 'user' }
    ])
    expect(await db('log_hour_counts').where('tenant_id', t).orderBy('hour').pluck('hour')).toEqual([1, 3])
    expect(await db('token_search_indexes').select('tenant_id', 'index_hash')).toEqual([{ tenant_id: t, index_hash: '0f'.repeat(32) }])

    // Applied again: the rebuilt tables' names (indexes, sequences) are free for the next rebuild.
    await db.migrate.latest()
    expect(await db('tokens').orderBy('seq').pluck('id')).toEqual(['b', 'c', 'a'])
  })

  async function expectCompactLayout(t: string, u: string, actor: string): Promise<void> {
    expect(await db('tenants').select('id', 'tenant_key').orderBy('tenant_key')).toEqual([{ id: t, tenant_key: 1 }, { id: u, tenant_key: 2 }])
    expect(await db('tokens').select('tenant_key', 'id', 'fingerprint_expression').orderBy('seq')).toEqual([
      { tenant_key: 1, id: 'b', fingerprint_expression: '' },
      { tenant_key: 2, id: 'c', fingerprint_expression: '' },
      { tenant_key: 1, id: 'a', fingerprint_expression: '{{' }
    ])
    expect(await db('logs').orderBy('seq').pluck('actor_type_code')).toEqual([1, null, 3])

    await loadTenantKeys(db)
    const reader = readerOf(db)
    const filter = { tenantId: t, now: 0, ids: [], types: [], metadata: {} }
    // Same millisecond: the later insertion first.
    expect((await listTokens(reader, filter, 10, 0)).map((row) => row.id)).toEqual(['a', 'b'])
    expect((await listTokens(reader, { ...filter, metadata: { k: 'B' } }, 10, 0)).map((row) => row.id)).toEqual(['b'])
    expect(await findToken(reader, t, 'a', 0)).toMatchObject({ tenant_id: t, fingerprint_expression: '', created_by: actor, modified_by: null })
    expect(await findToken(reader, u, 'c', 0)).toMatchObject({ fingerprint_expression: '{{ data.number }}' })
    expect(await findByFingerprint(reader, t, 'bank', Buffer.alloc(32, 'a').toString('hex'), 0)).toMatchObject({ id: 'a' })
    expect(await listLogs(reader, { tenantId: t, entityId: 'a' }, 10, 0)).toEqual([
      expect.objectContaining({ tenant_id: t, actor_id: actor, actor_type: 'user', created_at: 3 * HOUR }),
      expect.objectContaining({ tenant_id: t, actor_id: actor, actor_type: 'application', created_at: HOUR })
    ])
    expect(await countLogs(reader, { tenantId: u })).toBe(1)
    expect(await countLogsByPeriod(reader, { tenantId: t }, [[0, 2 * HOUR], [2 * HOUR, 4 * HOUR]])).toEqual([1, 1])

    // New rows continue the sequences past the copied ones.
    const [{ seq }] = await db('tokens')
      .insert({ tenant_key: 1, id: 'd', type: 'token', key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.alloc(32), fingerprint_expression: '', containers: '[]', metadata: '{}', created_at: 8 })
      .returning('seq')
    expect(Number(seq)).toBeGreaterThan(3)
    const [{ seq: logSeq }] = await db('logs').insert({ tenant_key: 1, entity_type: 'token', entity_id: 'd', operation: 'read', message: 'm', created_at: 9 }).returning('seq')
    expect(Number(logSeq)).toBe(4)
    await db('tokens').where('id', 'd').delete()
    await db('logs').where('seq', 4).delete()
  }
})
