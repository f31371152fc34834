import type { Knex } from 'knex'

/**
 * Which requests sent with a `BT-IDEMPOTENCY-KEY` committed their change: one
 * row per reservation (idempotency_keys.reservation), written in the same
 * transaction as the change (app/audit.ts). A reservation without a stored
 * response whose request is here was carried out and its response lost (the
 * service stopped in between), so a retry must not run it again; one absent
 * here changed nothing and may run again once abandoned. No foreign keys: the
 * row is written with the change, after its reservation may have been taken
 * over, and it outlives nothing (the expiry sweep deletes it with its key).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_commits', (t) => {
    t.uuid('reservation').notNullable().primary()
    t.string('request_hash', 64).notNullable() // as idempotency_keys.request_hash: tells a retry from another request under the key
    t.integer('changes').notNullable() // how many audited changes of the request recorded it: counted, so that another adds to the row instead of failing on its key
    t.bigInteger('expires_at').notNullable() // the key's
    t.index(['expires_at'])
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_commits')
}
