import type { Knex } from 'knex'
import { bigintType, uuidType, withoutRowid } from './dialect'

/**
 * The audit log's entity index moves out of the write path. Reads of a few hot
 * tokens inserted into as many pages of `logs (tenant_id, entity_type,
 * entity_id)` on every commit; now `log_entities` is filled in sorted batches by
 * a sweep, up to `log_entity_index.folded_through`, and entity queries read the
 * rows past that mark from `logs` itself (docs/performance.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('logs', (t) => t.dropIndex(['tenant_id', 'entity_type', 'entity_id']))
  await knex.raw(`CREATE TABLE log_entities (
    tenant_id ${uuidType(knex)} NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    entity_type TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    seq ${bigintType(knex)} NOT NULL,
    PRIMARY KEY (tenant_id, entity_type, entity_id, seq)
  )${withoutRowid(knex)}`)
  await knex.schema.createTable('log_entity_index', (t) => {
    t.bigInteger('folded_through').notNullable()
  })
  await knex.raw('INSERT INTO log_entities SELECT tenant_id, entity_type, entity_id, seq FROM logs ORDER BY 1, 2, 3, 4')
  const [{ last }] = await knex('logs').max({ last: 'seq' })
  await knex('log_entity_index').insert({ folded_through: Number(last ?? 0) })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('log_entity_index')
  await knex.schema.dropTable('log_entities')
  await knex.schema.alterTable('logs', (t) => t.index(['tenant_id', 'entity_type', 'entity_id']))
}
