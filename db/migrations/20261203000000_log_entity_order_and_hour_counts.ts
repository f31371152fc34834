import type { Knex } from 'knex'
import { bigintType, uuidType, withoutRowid } from './dialect'

/**
 * The audit log at scale (docs/performance.md, "Lists at scale").
 * - `log_entities` gains the entry's `created_at` in its key, before `seq`: an
 *   entity's entries come out of one key range newest first, in the list's own
 *   order (created_at, then seq), so a page stops after its rows instead of
 *   sorting all of the entity's entries, and a date range narrows the same range.
 * - `log_hour_counts`: entries per tenant, hour (`created_at` / 3,600,000) and
 *   entity type, kept in the same transaction as the entries like `log_counts`,
 *   so the activity chart adds up counters instead of counting entries.
 */
const HOUR = 3_600_000

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE log_entities_ordered (
    tenant_id ${uuidType(knex)} NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    entity_type TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    seq ${bigintType(knex)} NOT NULL,
    PRIMARY KEY (tenant_id, entity_type, entity_id, created_at, seq)
  )${withoutRowid(knex)}`)
  await knex.raw(
    `INSERT INTO log_entities_ordered (tenant_id, entity_type, entity_id, created_at, seq)
     SELECT e.tenant_id, e.entity_type, e.entity_id, l.created_at, e.seq FROM log_entities e JOIN logs l ON l.seq = e.seq
     ORDER BY e.tenant_id, e.entity_type, e.entity_id, l.created_at, e.seq`
  )
  await knex.schema.dropTable('log_entities')
  await knex.schema.renameTable('log_entities_ordered', 'log_entities')

  await knex.schema.createTable('log_hour_counts', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.bigInteger('hour').notNullable()
    t.string('entity_type', 50).notNullable()
    t.bigInteger('count').notNullable()
    // The hour before the type: the chart asks for a range of hours, of every type or of one.
    t.primary(['tenant_id', 'hour', 'entity_type'])
  })
  await knex.raw(
    `INSERT INTO log_hour_counts (tenant_id, hour, entity_type, count)
     SELECT tenant_id, created_at / ${HOUR}, entity_type, count(*) FROM logs GROUP BY tenant_id, created_at / ${HOUR}, entity_type`
  )
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('log_hour_counts')
  await knex.raw(`CREATE TABLE log_entities_by_seq (
    tenant_id ${uuidType(knex)} NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    entity_type TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    seq ${bigintType(knex)} NOT NULL,
    PRIMARY KEY (tenant_id, entity_type, entity_id, seq)
  )${withoutRowid(knex)}`)
  await knex.raw('INSERT INTO log_entities_by_seq (tenant_id, entity_type, entity_id, seq) SELECT tenant_id, entity_type, entity_id, seq FROM log_entities ORDER BY 1, 2, 3, 4')
  await knex.schema.dropTable('log_entities')
  await knex.schema.renameTable('log_entities_by_seq', 'log_entities')
}
