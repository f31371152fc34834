import type { Knex } from 'knex'

/**
 * A webhook's attempt lease: until `attempt_until`, one delivery worker (of
 * any instance sharing the database) has an attempt of this webhook in flight,
 * and no other starts one. Each instance kept to one attempt per webhook on its
 * own; two instances could each send one of the same webhook's deliveries at
 * once. Null when no attempt is in flight; a crashed worker's lease expires.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => {
    t.bigInteger('attempt_until')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => {
    t.dropColumn('attempt_until')
  })
}
