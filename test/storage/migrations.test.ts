import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readerOf } from '../../src/main/storage/connections'
import { migrationSource as source } from '../../src/main/storage/migrations'
import { countLogs, listLogs } from '../../src/main/storage/repositories/logs.repository'

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
    const filter = { tenantId: 't', entityType: 'token', entityId: 'a' }
    expect(await countLogs(readerOf(db), filter)).toBe(2)
    expect((await listLogs(readerOf(db), filter, 10, 0)).map((row) => Number(row.created_at))).toEqual([3, 1])
    // After the migration, new entries are past the mark and found through the tail.
    await db('logs').insert(entry('a', 4))
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
      tenant_id: 't', id, type, key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: id, fingerprint_expression: '{{ data }}', containers: '[]', metadata: '{}', created_at: 0
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
      tenant_id: tenant, id, type, key_version: 1, sealed_data: Buffer.alloc(40), fingerprint: id, fingerprint_expression: '{{ data }}', containers: '[]', metadata: JSON.stringify(metadata), created_at: 7
    })
    await db('tokens').insert([token('t', 'a', 'card', { Colour: 'ÉCRU', size: 'L' }), token('t', 'b', 'token', {}), token('u', 'c', 'token', { k: 'V' })])
    const entry = (tenant: string, entityType: string) => ({ tenant_id: tenant, entity_type: entityType, entity_id: 'x', operation: 'read', message: 'm', created_at: 1 })
    await db('logs').insert([entry('t', 'card'), entry('t', 'card'), entry('t', 'token'), entry('u', 'token')])

    await db.migrate.latest()
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
    const filter = { tenantId: 't', entityType: 'token', entityId: 'a' }
    expect((await listLogs(readerOf(db), filter, 10, 0)).map((row) => Number(row.created_at))).toEqual([2 * HOUR + 5, HOUR + 7])
    expect(await countLogs(readerOf(db), filter)).toBe(2)
    expect(await db('log_hour_counts').select('tenant_id', 'hour', 'entity_type', 'count').orderBy(['tenant_id', 'hour'])).toEqual([
      { tenant_id: 't', hour: 1, entity_type: 'token', count: 1 },
      { tenant_id: 't', hour: 2, entity_type: 'token', count: 2 },
      { tenant_id: 'u', hour: 0, entity_type: 'token', count: 1 }
    ])

    await db.migrate.down()
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
})
