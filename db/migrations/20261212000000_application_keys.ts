import { randomBytes, randomUUID } from 'node:crypto'
import type { Knex } from 'knex'

/**
 * Application keys: an application holds any number of keys, each stored only
 * as a keyed hash. Each existing application's key moves into the new table
 * (same hash, so it keeps working). The hashes are read first and the old
 * column dropped before the new table exists: on SQLite, dropping a column
 * rebuilds `applications`, which would otherwise cascade into the new rows.
 */
export async function up(knex: Knex): Promise<void> {
  const existing: Array<{ id: string; tenant_id: string; key_hash: string; created_by: string | null; created_at: number }> = await knex('applications').select(
    'id',
    'tenant_id',
    'key_hash',
    'created_by',
    'created_at'
  )
  await knex.schema.alterTable('applications', (t) => {
    t.dropUnique(['key_hash'])
  })
  await knex.schema.alterTable('applications', (t) => {
    t.dropColumn('key_hash')
  })
  await knex.schema.createTable('application_keys', (t) => {
    t.uuid('id').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.uuid('application_id').notNullable().references('applications.id').onDelete('CASCADE')
    t.string('key_hash', 100).notNullable().unique()
    t.uuid('created_by')
    t.bigInteger('created_at').notNullable()
    t.index(['application_id', 'created_at'])
  })
  for (const row of existing) {
    await knex('application_keys').insert({
      id: randomUUID(),
      tenant_id: row.tenant_id,
      application_id: row.id,
      key_hash: row.key_hash,
      created_by: row.created_by,
      created_at: row.created_at
    })
  }
}

/** Back to one key per application: the newest key of each stays; applications without a key get an unusable hash. */
export async function down(knex: Knex): Promise<void> {
  const keys: Array<{ application_id: string; key_hash: string }> = await knex('application_keys').select('application_id', 'key_hash').orderBy('created_at', 'asc')
  const newest = new Map(keys.map((key) => [key.application_id, key.key_hash]))
  await knex.schema.dropTable('application_keys')
  await knex.schema.alterTable('applications', (t) => {
    t.string('key_hash', 100)
  })
  for (const { id } of await knex('applications').select('id')) {
    await knex('applications')
      .where({ id })
      .update({ key_hash: newest.get(id) ?? `unusable_${randomBytes(16).toString('hex')}` })
  }
  await knex.schema.alterTable('applications', (t) => {
    t.unique(['key_hash'])
  })
}
