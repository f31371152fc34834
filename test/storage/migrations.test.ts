import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readerOf } from '../../src/main/storage/connections'
import { migrationSource as source } from '../../src/main/storage/migrations'
import { countLogs, foldLogEntities, listLogs } from '../../src/main/storage/repositories/logs.repository'
import { findByFingerprint, findToken, listTokens } from '../../src/main/storage/repositories/tokens.repository'
import { loadTenantKeys, tenantKeys } from '../../src/main/storage/tenant-keys'
import { traceBytes } from '../../src/main/storage/trace-bytes'
import { DEFAULT_FINGERPRINT_EXPRESSIONS, EMPTY_EXPRESSION } from '../../db/migrations/20261219000000_default_fingerprint_expression'
import { DEFAULT_CONTAINERS } from '../../db/migrations/20261228000000_token_containers'
import { getTokenType } from '../../src/main/domain/token-types'
import { validateExpression } from '../../src/main/domain/expressions'
import { TOKEN_TYPE_NAMES } from '../../src/shared/token-rules'

describe('migrations', () => {
  let dir: string
  let db: Knex

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-migrations-'))
    db = knex({ client: 'sqlite3', connection: { filename: join(dir, 'v.db') }, useNullAsDefault: true, migrations: { migrationSource: source } })
  })
  afterEach(async () => {
    await db.destroy()
    await rm(dir, { recursive: true, force: true })
  })

  it('moves the audit log entity index out of the write path and keeps every earlier entry findable by entity', async () => {
    await db.migrate.up() // initial schema
    await db.migrate.up() // outbox key version
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0 })
    const entry = (entityId: string, createdAt: number) => ({ tenant_id: 't', entity_type: 'token', entity_id: entityId, operation: 'read', message: 'Token retrieved', created_at: createdAt })
    await db('logs').insert([entry('a', 1), entry('b', 2), entry('a', 3)])

    await db.migrate.latest()
    await loadTenantKeys(db)
    const filter = { tenantId: 't', entityType: 'token', entityId: 'a' }
    expect(await countLogs(readerOf(db), filter)).toBe(2)
    expect((await listLogs(readerOf(db), filter, 10, 0)).map((row) => Number(row.created_at))).toEqual([3, 1])
    // After the migration, new entries are past the mark and found through the tail.
    const { tenant_id: tenantId, ...later } = entry('a', 4)
    await db('logs').insert({ ...later, tenant_key: tenantKeys(db).keyOf(tenantId) })
    expect((await listLogs(readerOf(db), filter, 10, 0)).map((row) => Number(row.created_at))).toEqual([4, 3, 1])

    await db.migrate.rollback(undefined, true)
    expect(await db.schema.hasTable('log_entities')).toBe(false)
  })

  it('marks the cards stored before CVC retention as due, so the sweep looks at each once', async () => {
    await db.migrate.up()
    await db.migrate.up()
    await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0 })
    const token = (id: string, type: string) => ({
      tenant_id: 't', id, type, key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.from(id).toString('hex'), fingerprint_expression: '{{ data }}', containers: '[]', metadata: '{}', created_at: 0
    })
    await db('tokens').insert([token('a-card', 'card'), token('a-bank', 'bank')])
    await db.migrate.latest()
    const rows = await db('tokens').select('id', 'cvc_expires_at').orderBy('id')
    expect(rows).toEqual([{ id: 'a-bank', cvc_expires_at: null }, { id: 'a-card', cvc_expires_at: expect.any(Number) }])
    await db.migrate.rollback(undefined, true)
    expect(await db.schema.hasTable('key_rotations')).toBe(false)
  })

  it('adds the audit chain columns and checkpoint table, keeping every entry, and rolls back', async () => {
    for (let i = 0; i < 3; i++) await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0 })
    await db('logs').insert({ tenant_id: 't', entity_type: 'token', entity_id: 'a', operation: 'read', message: 'Token retrieved', created_at: 1 })
    await db.migrate.up() // key rotation
    await db.migrate.up() // audit chain
    // Existing entries wait, unchained, for the vault's first opening (which holds the master key).
    expect(await db('logs').select('seq', 'message', 'count', 'mac')).toEqual([{ seq: 1, message: 'Token retrieved', count: null, mac: null }])
    expect(await db('vault').columnInfo()).toHaveProperty('wrapped_audit_mac_key')
    expect(await db.schema.hasTable('log_chain')).toBe(true)

    // Down to the migration before the audit chain, whatever came after it.
    while (Number(await db.migrate.currentVersion()) >= 20261129000000) await db.migrate.down()
    expect(await db.schema.hasTable('log_chain')).toBe(false)
    expect(await db('logs').columnInfo()).not.toHaveProperty('mac')
    expect(await db('logs').select('message')).toEqual([{ message: 'Token retrieved' }])
  })

  it('gives an existing chain checkpoint the genesis anchor (nothing archived), and rolls back', async () => {
    await db.migrate.up({ name: '20261125000000_initial_schema' })
    while (Number(await db.migrate.currentVersion()) < 20261129000000) await db.migrate.up()
    await db('log_chain').insert({ checkpoint_seq: 5, checkpoint_mac: Buffer.alloc(32, 1), checkpoint_tag: Buffer.alloc(32, 2) })
    await db.migrate.up({ name: '20261130000000_audit_anchor' })
    expect(await db('log_chain').select('checkpoint_seq', 'anchor_seq', 'anchor_mac')).toEqual([{ checkpoint_seq: 5, anchor_seq: 0, anchor_mac: null }])
    await db.migrate.down({ name: '20261130000000_audit_anchor' })
    expect(await db('log_chain').columnInfo()).not.toHaveProperty('anchor_seq')
  })

  it('indexes the metadata of existing tokens, folded, counts tokens and entries per tenant, and rolls back', async () => {
    for (let i = 0; i < 5; i++) await db.migrate.up()
    await db('tenants').insert([{ id: 't', name: 'Tenant', created_at: 0 }, { id: 'u', name: 'Other', created_at: 0 }])
    const token = (tenant: string, id: string, type: string, metadata: object) => ({
      tenant_id: tenant, id, type, key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.from(id).toString('hex'), fingerprint_expression: '{{ data }}', containers: '[]', metadata: JSON.stringify(metadata), created_at: 7
    })
    await db('tokens').insert([token('t', 'a', 'card', { Colour: 'ÉCRU', size: 'L' }), token('t', 'b', 'token', {}), token('u', 'c', 'token', { k: 'V' })])
    const entry = (tenant: string, entityType: string) => ({ tenant_id: tenant, entity_type: entityType, entity_id: 'x', operation: 'read', message: 'm', created_at: 1 })
    await db('logs').insert([entry('t', 'card'), entry('t', 'card'), entry('t', 'token'), entry('u', 'token')])

    while (Number(await db.migrate.currentVersion()) < 20261201000000) await db.migrate.up()
    expect(await db('token_metadata').select('tenant_id', 'token_id', 'key', 'value_folded', 'created_at').orderBy(['tenant_id', 'token_id', 'key'])).toEqual([
      { tenant_id: 't', token_id: 'a', key: 'Colour', value_folded: 'écru', created_at: 7 },
      { tenant_id: 't', token_id: 'a', key: 'size', value_folded: 'l', created_at: 7 },
      { tenant_id: 'u', token_id: 'c', key: 'k', value_folded: 'v', created_at: 7 }
    ])
    expect(await db('token_counts').select('tenant_id', 'type', 'count').orderBy(['tenant_id', 'type'])).toEqual([
      { tenant_id: 't', type: 'card', count: 1 },
      { tenant_id: 't', type: 'token', count: 1 },
      { tenant_id: 'u', type: 'token', count: 1 }
    ])
    expect(await db('log_counts').select('tenant_id', 'entity_type', 'count').orderBy(['tenant_id', 'entity_type'])).toEqual([
      { tenant_id: 't', entity_type: 'card', count: 2 },
      { tenant_id: 't', entity_type: 'token', count: 1 },
      { tenant_id: 'u', entity_type: 'token', count: 1 }
    ])

    while (Number(await db.migrate.currentVersion()) >= 20261201000000) await db.migrate.down()
    for (const table of ['token_metadata', 'token_counts', 'log_counts']) expect(await db.schema.hasTable(table)).toBe(false)
    expect(await db('tokens').count({ count: '*' })).toEqual([{ count: 3 }])
  })

  it('keys the entity index by time, keeping every folded entry, counts entries per hour, and rolls back', async () => {
    await db.migrate.up({ name: '20261125000000_initial_schema' })
    while (Number(await db.migrate.currentVersion()) < 20261201000000) await db.migrate.up()
    await db('tenants').insert([{ id: 't', name: 'Tenant', created_at: 0 }, { id: 'u', name: 'Other', created_at: 0 }])
    const HOUR = 3_600_000
    // Chain order is not time order: an aggregated entry dates from its first event.
    const entry = (tenant: string, entityId: string, createdAt: number) => ({ tenant_id: tenant, entity_type: 'token', entity_id: entityId, operation: 'read', message: 'm', created_at: createdAt })
    await db('logs').insert([entry('t', 'a', 2 * HOUR + 5), entry('t', 'a', HOUR + 7), entry('t', 'b', 2 * HOUR), entry('u', 'a', 3)])
    // Folded before the migration, as the sweep leaves them.
    await db('log_entities').insert(await db('logs').select('tenant_id', 'entity_type', 'entity_id', 'seq'))
    await db('log_entity_index').update({ folded_through: 4 })

    await db.migrate.up({ name: '20261203000000_log_entity_order_and_hour_counts' })
    expect(await db('log_entities').select('entity_id', 'created_at', 'seq').where('tenant_id', 't').orderBy(['entity_id', 'created_at'])).toEqual([
      { entity_id: 'a', created_at: HOUR + 7, seq: 2 },
      { entity_id: 'a', created_at: 2 * HOUR + 5, seq: 1 },
      { entity_id: 'b', created_at: 2 * HOUR, seq: 3 }
    ])
    expect(await db('log_hour_counts').select('tenant_id', 'hour', 'entity_type', 'count').orderBy(['tenant_id', 'hour'])).toEqual([
      { tenant_id: 't', hour: 1, entity_type: 'token', count: 1 },
      { tenant_id: 't', hour: 2, entity_type: 'token', count: 2 },
      { tenant_id: 'u', hour: 0, entity_type: 'token', count: 1 }
    ])
    // Through the repositories, which read the latest schema.
    await db.migrate.latest()
    await loadTenantKeys(db)
    const filter = { tenantId: 't', entityType: 'token', entityId: 'a' }
    expect((await listLogs(readerOf(db), filter, 10, 0)).map((row) => Number(row.created_at))).toEqual([2 * HOUR + 5, HOUR + 7])
    expect(await countLogs(readerOf(db), filter)).toBe(2)

    while (Number(await db.migrate.currentVersion()) >= 20261203000000) await db.migrate.down()
    expect(await db.schema.hasTable('log_hour_counts')).toBe(false)
    expect(await db('log_entities').select('entity_id', 'seq').where('tenant_id', 't').orderBy('seq')).toEqual([
      { entity_id: 'a', seq: 1 },
      { entity_id: 'a', seq: 2 },
      { entity_id: 'b', seq: 3 }
    ])
  })

  it('moves each application key hash into application_keys, keeping the application, and rolls back', async () => {
    await db.raw('PRAGMA foreign_keys = ON') // as the vault opens its database
    await db.migrate.up({ name: '20261125000000_initial_schema' })
    while (Number(await db.migrate.currentVersion()) < 20261211000000) await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0 })
    await db('applications').insert({ id: 'a', tenant_id: 't', name: 'Backend', type: 'private', permissions: '[]', rules: '[]', key_hash: 'hash-a', created_by: 'u', created_at: 5 })
    await db.migrate.up({ name: '20261212000000_application_keys' })
    expect(await db('applications').columnInfo()).not.toHaveProperty('key_hash')
    expect(await db('applications').select('id', 'name')).toEqual([{ id: 'a', name: 'Backend' }])
    expect(await db('application_keys').select('tenant_id', 'application_id', 'key_hash', 'created_by', 'created_at')).toEqual([
      { tenant_id: 't', application_id: 'a', key_hash: 'hash-a', created_by: 'u', created_at: 5 }
    ])
    await db('application_keys').insert({ id: 'k2', tenant_id: 't', application_id: 'a', key_hash: 'hash-b', created_at: 6 })
    await db.migrate.down()
    expect(await db.schema.hasTable('application_keys')).toBe(false)
    expect(await db('applications').select('id', 'key_hash')).toEqual([{ id: 'a', key_hash: 'hash-b' }])
  })

  it('gives each tenant a compact key in the tables that grow with the vault, keeping every row, and rolls back', async () => {
    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < 20261213000000) await db.migrate.up()
    await db('tenants').insert([{ id: 'u', name: 'Later', created_at: 5 }, { id: 't', name: 'First', created_at: 1 }])
    const token = (tenant: string, id: string, createdAt: number) => ({
      tenant_id: tenant, id, type: 'token', key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.from(id).toString('hex'), fingerprint_expression: '{{ data }}', containers: '[]', metadata: JSON.stringify({ k: id }), created_at: createdAt
    })
    await db('tokens').insert([token('t', 'b', 7), token('u', 'c', 7), token('t', 'a', 7)])
    await db('token_metadata').insert([
      { tenant_id: 't', token_id: 'b', key: 'k', value_folded: 'b', created_at: 7 },
      { tenant_id: 'u', token_id: 'c', key: 'k', value_folded: 'c', created_at: 7 },
      { tenant_id: 't', token_id: 'a', key: 'k', value_folded: 'a', created_at: 7 }
    ])
    await db('token_counts').insert([{ tenant_id: 't', type: 'token', count: 2 }, { tenant_id: 'u', type: 'token', count: 1 }])
    const entry = (tenant: string, seq: number) => ({ seq, tenant_id: tenant, entity_type: 'token', entity_id: 'a', operation: 'read', message: 'm', created_at: seq, mac: Buffer.alloc(32, seq) })
    await db('logs').insert([entry('t', 1), entry('u', 2), entry('t', 3)])
    await db('log_counts').insert([{ tenant_id: 't', entity_type: 'token', count: 2 }, { tenant_id: 'u', entity_type: 'token', count: 1 }])
    await db('log_hour_counts').insert([{ tenant_id: 't', hour: 0, entity_type: 'token', count: 2 }, { tenant_id: 'u', hour: 0, entity_type: 'token', count: 1 }])
    // The first entry folded into the entity index before the migration, the others in the tail.
    await db('log_entities').insert({ tenant_id: 't', entity_type: 'token', entity_id: 'a', created_at: 1, seq: 1 })
    await db('log_entity_index').update({ folded_through: 1 })

    await db.migrate.latest()
    expect(await db('log_entities').select('*')).toEqual([{ tenant_key: 1, entity_type: 'token', entity_id: 'a', created_at: 1, seq: 1 }])
    expect(await db('log_hour_counts').select('*').orderBy('tenant_key')).toEqual([
      { tenant_key: 1, hour: 0, entity_type: 'token', count: 2 },
      { tenant_key: 2, hour: 0, entity_type: 'token', count: 1 }
    ])
    expect(await db('tenants').select('id', 'tenant_key').orderBy('tenant_key')).toEqual([{ id: 't', tenant_key: 1 }, { id: 'u', tenant_key: 2 }])
    expect(await db('tokens').select('tenant_key', 'id').orderBy('rowid')).toEqual([{ tenant_key: 1, id: 'b' }, { tenant_key: 2, id: 'c' }, { tenant_key: 1, id: 'a' }])
    const reader = readerOf(db)
    await loadTenantKeys(db)
    await db.transaction((trx) => foldLogEntities(trx as never, 10))
    // Newest first, insertion order breaking the tie: the rebuilt table kept the tokens' order.
    const filter = { tenantId: 't', now: 0, ids: [], types: [], metadata: {} }
    expect((await listTokens(reader, filter, 10, 0)).map((row) => row.id)).toEqual(['a', 'b'])
    expect((await listTokens(reader, { ...filter, metadata: { k: 'B' } }, 10, 0)).map((row) => row.id)).toEqual(['b'])
    expect(await findToken(reader, 'u', 'c', 0)).toMatchObject({ tenant_id: 'u', id: 'c', sealed_data: Buffer.alloc(40) })
    expect(await listLogs(reader, { tenantId: 't', entityId: 'a' }, 10, 0)).toEqual([
      expect.objectContaining({ tenant_id: 't', created_at: 3 }),
      expect.objectContaining({ tenant_id: 't', created_at: 1 })
    ])
    expect(await countLogs(reader, { tenantId: 'u' })).toBe(1)
    expect(await db('logs').select('seq', 'mac').orderBy('seq')).toEqual([1, 2, 3].map((seq) => ({ seq, mac: Buffer.alloc(32, seq) })))

    while (Number(await db.migrate.currentVersion()) >= 20261214000000) await db.migrate.down()
    expect(await db('tenants').columnInfo()).not.toHaveProperty('tenant_key')
    expect(await db('tokens').select('tenant_id', 'id').orderBy('rowid')).toEqual([{ tenant_id: 't', id: 'b' }, { tenant_id: 'u', id: 'c' }, { tenant_id: 't', id: 'a' }])
    expect(await db('token_metadata').select('tenant_id', 'token_id').orderBy(['tenant_id', 'token_id'])).toEqual([
      { tenant_id: 't', token_id: 'a' },
      { tenant_id: 't', token_id: 'b' },
      { tenant_id: 'u', token_id: 'c' }
    ])
    expect(await db('log_entities').select('tenant_id', 'seq').orderBy('seq')).toEqual([{ tenant_id: 't', seq: 1 }, { tenant_id: 'u', seq: 2 }, { tenant_id: 't', seq: 3 }])
    expect(await db('log_counts').select('tenant_id', 'count').orderBy('tenant_id')).toEqual([{ tenant_id: 't', count: 2 }, { tenant_id: 'u', count: 1 }])
    expect(await db('log_hour_counts').select('tenant_id', 'count').orderBy('tenant_id')).toEqual([{ tenant_id: 't', count: 2 }, { tenant_id: 'u', count: 1 }])
    // Deleting a token still takes its metadata with it.
    await db.raw('PRAGMA foreign_keys = ON')
    await db('tokens').where({ tenant_id: 't', id: 'a' }).delete()
    expect(await db('token_metadata').where('token_id', 'a')).toEqual([])
  })

  it('keeps fingerprints and search index hashes as bytes, finds a token by its fingerprint, and rolls back to hex', async () => {
    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < 20261214000000) await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0, tenant_key: 1 })
    const fingerprint = 'ab'.repeat(32)
    const hash = '0f'.repeat(32)
    await db('tokens').insert({
      tenant_key: 1, id: 'a', type: 'token', key_version: 1, sealed_data: Buffer.alloc(40), fingerprint, fingerprint_expression: '{{ data }}', containers: '[]', metadata: '{}', created_at: 7
    })
    await db('token_search_indexes').insert({ tenant_key: 1, token_id: 'a', index_hash: hash })
    await db('token_search_indexes').insert({ tenant_key: 1, token_id: 'a', index_hash: 'not hex' })
    await expect(db.migrate.up()).rejects.toThrow('token_search_indexes.index_hash holds something other than lowercase hex')
    await db('token_search_indexes').where('index_hash', 'not hex').delete()

    await db.migrate.latest()
    expect(await db('tokens').select('fingerprint')).toEqual([{ fingerprint: Buffer.alloc(32, 0xab) }])
    expect(await db('token_search_indexes').select('index_hash')).toEqual([{ index_hash: Buffer.alloc(32, 0x0f) }])
    await loadTenantKeys(db)
    expect(await findByFingerprint(readerOf(db), 't', 'token', fingerprint, 0)).toMatchObject({ id: 'a', fingerprint })

    while (Number(await db.migrate.currentVersion()) >= 20261215000000) await db.migrate.down()
    expect(await db('tokens').select('fingerprint')).toEqual([{ fingerprint }])
    expect(await db('token_search_indexes').select('index_hash')).toEqual([{ index_hash: hash }])
    expect(await db.raw("SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('tokens_fingerprint_index', 'token_search_indexes_tenant_key_index_hash_index')")).toHaveLength(2)
  })

  it('keeps token_metadata in the order of the filters, one b-tree, and rolls back to two', async () => {
    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < 20261215000000) await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0, tenant_key: 1 })
    await db('tokens').insert({
      tenant_key: 1, id: 'a', type: 'token', key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.alloc(32), fingerprint_expression: '{{ data }}', containers: '[]', metadata: '{"k":"V"}', created_at: 7
    })
    await db('token_metadata').insert({ tenant_key: 1, token_id: 'a', key: 'k', value_folded: 'v', created_at: 7 })
    const indexes = () => db('sqlite_master').where({ type: 'index', tbl_name: 'token_metadata' }).whereNotNull('sql').pluck('name')

    await db.migrate.latest()
    expect(await db('token_metadata').select('*')).toEqual([{ tenant_key: 1, key: 'k', value_folded: 'v', created_at: 7, token_id: 'a' }])
    expect(await indexes()).toEqual([])

    while (Number(await db.migrate.currentVersion()) >= 20261216000000) await db.migrate.down()
    expect(await db('token_metadata').select('*')).toEqual([{ tenant_key: 1, token_id: 'a', key: 'k', value_folded: 'v', created_at: 7 }])
    expect(await indexes()).toEqual(['token_metadata_tenant_key_key_value_folded_created_at_index'])
  })

  it('keeps actor ids as their bytes, gives back the same text, refuses ids that would not come back the same, and rolls back', async () => {
    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < 20261216000000) await db.migrate.up()
    const actor = randomUUID()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0, tenant_key: 1 })
    await db('tokens').insert({
      tenant_key: 1, id: 'a', type: 'token', key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.alloc(32), fingerprint_expression: '{{ data }}', containers: '[]', metadata: '{}', created_by: actor, created_at: 7
    })
    const entry = (seq: number, actorId: string | null) => ({ seq, tenant_key: 1, actor_id: actorId, entity_type: 'token', entity_id: 'a', operation: 'read', message: 'm', created_at: seq })
    await db('logs').insert([entry(1, actor), entry(2, null)])
    await db('logs').insert(entry(3, actor.toUpperCase()))
    await expect(db.migrate.up()).rejects.toThrow('logs.actor_id holds an id that is not a lowercase UUID')
    expect(await db('tokens').select('created_by')).toEqual([{ created_by: actor }])
    await db('logs').where('seq', 3).delete()

    await db.migrate.latest()
    const bytes = Buffer.from(actor.replaceAll('-', ''), 'hex')
    expect(await db('tokens').select('created_by', 'modified_by')).toEqual([{ created_by: bytes, modified_by: null }])
    expect(await db('logs').select('actor').orderBy('seq')).toEqual([{ actor: bytes }, { actor: null }])
    await loadTenantKeys(db)
    expect((await listLogs(readerOf(db), { tenantId: 't' }, 10, 0)).map((row) => row.actor_id)).toEqual([null, actor])
    expect(await findToken(readerOf(db), 't', 'a', 0)).toMatchObject({ created_by: actor, modified_by: null })

    while (Number(await db.migrate.currentVersion()) >= 20261217000000) await db.migrate.down()
    expect(await db('tokens').select('created_by', 'modified_by')).toEqual([{ created_by: actor, modified_by: null }])
    expect(await db('logs').select('actor_id').orderBy('seq')).toEqual([{ actor_id: actor }, { actor_id: null }])
  })

  it('keeps actor types as one-byte codes, gives back the same names, refuses an unknown type, and rolls back', async () => {
    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < 20261217000000) await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0, tenant_key: 1 })
    const entry = (seq: number, actorType: string | null) => ({ seq, tenant_key: 1, actor_type: actorType, entity_type: 'token', entity_id: 'a', operation: 'read', message: 'm', created_at: seq })
    await db('logs').insert([entry(1, 'application'), entry(2, 'session'), entry(3, 'user'), entry(4, null), entry(5, 'robot')])
    await expect(db.migrate.up()).rejects.toThrow('logs.actor_type holds a type other than application, session or user')
    await db('logs').where('seq', 5).delete()

    await db.migrate.latest()
    expect(await db('logs').orderBy('seq').pluck('actor_type_code')).toEqual([1, 2, 3, null])
    await loadTenantKeys(db)
    expect((await listLogs(readerOf(db), { tenantId: 't' }, 10, 0)).map((row) => row.actor_type)).toEqual([null, 'user', 'session', 'application'])

    while (Number(await db.migrate.currentVersion()) >= 20261218000000) await db.migrate.down()
    expect(await db('logs').orderBy('seq').pluck('actor_type')).toEqual(['application', 'session', 'user', null])
    expect(await db('logs').columnInfo()).not.toHaveProperty('actor_type_code')
  })

  it('stores a default fingerprint expression as \'\' and an empty one as \'{{\', for exactly the defaults of the token types, and rolls back', async () => {
    // The defaults '' stands for are the types' own, so that every token keeping its type's default stores ''.
    expect(DEFAULT_FINGERPRINT_EXPRESSIONS).toEqual(Object.fromEntries(TOKEN_TYPE_NAMES.map((name) => [name, getTokenType(name)!.defaultFingerprintExpression])))
    expect(() => validateExpression(EMPTY_EXPRESSION, 'fingerprint_expression')).toThrow()

    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < 20261218000000) await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0, tenant_key: 1 })
    const token = (id: string, type: string, expression: string) => ({
      tenant_key: 1, id, type, key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.alloc(32), fingerprint_expression: expression, containers: '[]', metadata: '{}', created_at: 7
    })
    const given = [token('a', 'token', '{{ data | stringify }}'), token('b', 'card', '{{ data | stringify }}'), token('c', 'card', '{{ data.number }}'), token('d', 'bank', '')]
    await db('tokens').insert(given)

    await db.migrate.latest()
    expect(await db('tokens').orderBy('id').pluck('fingerprint_expression')).toEqual(['', '{{ data | stringify }}', '', '{{'])
    await loadTenantKeys(db)
    for (const { id, fingerprint_expression } of given) expect(await findToken(readerOf(db), 't', id, 0)).toMatchObject({ fingerprint_expression })

    // Later migrations first, then this one.
    while (Number(await db.migrate.currentVersion()) >= 20261219000000) await db.migrate.down()
    expect(await db('tokens').orderBy('id').pluck('fingerprint_expression')).toEqual(given.map((row) => row.fingerprint_expression))
  })

  it('gives search index rows their token\'s created_at, in an index of the v2 search order, and rolls back', async () => {
    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < 20261219000000) await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0, tenant_key: 1 })
    const token = (id: string, created_at: number) => ({
      tenant_key: 1, id, type: 'token', key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.alloc(32), fingerprint_expression: '', containers: '[]', metadata: '{}', created_at
    })
    await db('tokens').insert([token('a', 7), token('b', 9)])
    await db('token_search_indexes').insert([
      { tenant_key: 1, token_id: 'a', index_hash: Buffer.alloc(32, 1) },
      { tenant_key: 1, token_id: 'b', index_hash: Buffer.alloc(32, 1) }
    ])
    const indexes = () => db.raw("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'token_search_indexes' ORDER BY name")

    await db.migrate.latest()
    expect(await db('token_search_indexes').orderBy('token_id').select('token_id', 'created_at')).toEqual([{ token_id: 'a', created_at: 7 }, { token_id: 'b', created_at: 9 }])
    expect((await indexes()).map((row: { name: string }) => row.name)).toEqual([
      'token_search_indexes_tenant_key_index_hash_created_at_token_id_index',
      'token_search_indexes_tenant_key_token_id_index'
    ])

    while (Number(await db.migrate.currentVersion()) >= 20261220000000) await db.migrate.down()
    expect(await db('token_search_indexes').columnInfo()).not.toHaveProperty('created_at')
    expect((await indexes()).map((row: { name: string }) => row.name)).toEqual(['token_search_indexes_tenant_key_index_hash_index', 'token_search_indexes_tenant_key_token_id_index'])
  })

  it('adds a trace id to audit entries, none on the existing ones, gives back every kind of id exactly, and rolls back', async () => {
    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < 20261219000000) await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0, tenant_key: 1 })
    const entry = (seq: number) => ({ seq, tenant_key: 1, entity_type: 'token', entity_id: 'a', operation: 'read', message: 'm', created_at: seq })
    await db('logs').insert(entry(1))

    await db.migrate.latest()
    expect(await db('logs').pluck('trace')).toEqual([null])
    const uuid = randomUUID()
    // A lowercase UUID in 16 bytes; any other id as its text, a 16-byte one padded so it is not read as a UUID.
    const traces = [uuid, uuid.toUpperCase(), 'sixteen-chars-id', 'seventeen-chars-i', 'x', 'x'.repeat(128), 'checkout 7f3a/2026']
    await db('logs').insert(traces.map((trace, i) => ({ ...entry(i + 2), trace: traceBytes(trace) })))
    expect((await db('logs').where('seq', 2).first()).trace).toHaveLength(16)
    expect((await db('logs').where('seq', 4).first()).trace).toHaveLength(17)
    await loadTenantKeys(db)
    expect((await listLogs(readerOf(db), { tenantId: 't' }, 10, 0)).map((row) => row.trace_id)).toEqual([...[...traces].reverse(), null])

    // Later migrations (PostgreSQL-only ones included) are undone first.
    while (Number(await db.migrate.currentVersion()) >= 20261222000000) await db.migrate.down()
    expect(await db('logs').columnInfo()).not.toHaveProperty('trace')
    expect(await db('logs').count({ n: '*' })).toEqual([{ n: traces.length + 1 }])
  })

  it('indexes the containers of the existing tokens not in their type\'s default ones, and rolls back', async () => {
    // The defaults are the types' own: a token keeping its type's default containers gets no row.
    expect(DEFAULT_CONTAINERS).toEqual(Object.fromEntries(TOKEN_TYPE_NAMES.map((name) => [name, getTokenType(name)!.defaultContainers])))
    await db.migrate.up()
    while (Number(await db.migrate.currentVersion()) < 20261227000000) await db.migrate.up()
    await db('tenants').insert({ id: 't', name: 'Tenant', created_at: 0, tenant_key: 1 })
    const token = (id: string, type: string, containers: string[]) => ({
      tenant_key: 1, id, type, key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: Buffer.alloc(32), fingerprint_expression: '', containers: JSON.stringify(containers), metadata: '{}', created_at: 7
    })
    await db('tokens').insert([
      token('a', 'card', ['/pci/high/']),
      token('b', 'card', ['/general/high/']),
      token('c', 'token', ['/general/high/', '/rare/']),
      token('d', 'bank', ['/bank/high/']),
      token('e', 'token', ['/pci/high/', '/pci/high/'])
    ])

    await db.migrate.latest()
    expect(await db('token_containers').orderBy(['token_id', 'container']).select('token_id', 'container', 'created_at')).toEqual([
      { token_id: 'b', container: '/general/high/', created_at: 7 },
      { token_id: 'c', container: '/general/high/', created_at: 7 },
      { token_id: 'c', container: '/rare/', created_at: 7 },
      { token_id: 'e', container: '/pci/high/', created_at: 7 }
    ])

    while (Number(await db.migrate.currentVersion()) >= 20261228000000) await db.migrate.down()
    expect(await db.schema.hasTable('token_containers')).toBe(false)
  })
})
