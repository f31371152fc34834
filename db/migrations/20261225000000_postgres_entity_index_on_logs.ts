import type { Knex } from 'knex'
import { isPostgres } from './dialect'

/**
 * PostgreSQL: an entity's entries are found through an index on `logs` itself,
 * written with each entry, instead of the `log_entities` table that the
 * `index-logs` sweep fills behind the writers (SQLite keeps that table).
 *
 * On SQLite the side table keeps the write path short: an index of a few hot
 * tokens' entries cost each commit more than the fold costs later. On
 * PostgreSQL the fold was the dearer of the two: reading its range of `logs`
 * back and inserting a heap row and an index entry per entry in a statement of
 * its own, where the index costs one index entry in the batch that writes the
 * entry anyway. It also leaves nothing to merge: no tail past a mark, and one
 * range holds an entity's entries of every type (a type filter is checked on
 * each entry of the range: an entity id is one entity's, but for the rare id
 * two kinds of entity share).
 */
export async function up(knex: Knex): Promise<void> {
  if (!isPostgres(knex)) return
  await knex.raw('CREATE INDEX logs_entity_index ON logs (tenant_key, entity_id, created_at, seq)')
  await knex.schema.dropTable('log_entities')
  await knex.schema.dropTable('log_entity_index')
}

export async function down(knex: Knex): Promise<void> {
  if (!isPostgres(knex)) return
  await knex.raw(`CREATE TABLE log_entities (
    tenant_key INTEGER NOT NULL,
    entity_type TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    seq bigint NOT NULL,
    PRIMARY KEY (tenant_key, entity_type, entity_id, created_at, seq)
  )`)
  await knex.raw('INSERT INTO log_entities SELECT tenant_key, entity_type, entity_id, created_at, seq FROM logs ORDER BY 1, 2, 3, 4, 5')
  await knex.schema.createTable('log_entity_index', (t) => {
    t.bigInteger('folded_through').notNullable()
  })
  const [{ last }] = await knex('logs').max({ last: 'seq' })
  await knex('log_entity_index').insert({ folded_through: Number(last ?? 0) })
  await knex.raw('DROP INDEX logs_entity_index')
}
