import type { Knex } from 'knex'

/**
 * Each webhook's pending deliveries in due order: a delivery worker claims, for
 * each webhook without an attempt in flight, its oldest due delivery with one
 * probe of this index. Through (status, next_attempt_at) alone it walked past
 * every due delivery of the webhooks in flight: one receiver that never answers,
 * with a backlog of thousands, made each claim for the others read all of it.
 * (status, next_attempt_at) stays for the retention sweep, which reads finished
 * deliveries of every webhook by completion time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.index(['status', 'webhook_id', 'next_attempt_at'])
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropIndex(['status', 'webhook_id', 'next_attempt_at'])
  })
}
