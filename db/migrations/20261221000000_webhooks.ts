import type { Knex } from 'knex'

/**
 * Webhooks and their deliveries. `webhook_deliveries` is the outbox: a row per
 * event and subscribed webhook, written in the transaction of the change it
 * announces, claimed by one instance per attempt (`next_attempt_at` is its lease),
 * and kept afterwards as the delivery log (`attempt_log`: JSON array of attempts).
 * `event` is the event object as sent: ids, types, metadata, never token data.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhooks', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.uuid('id').notNullable()
    t.string('name', 200).notNullable()
    t.text('url').notNullable()
    t.string('notify_email', 254)
    t.text('events').notNullable() // JSON array of event type names
    t.string('status', 20).notNullable()
    t.string('created_by', 100).notNullable()
    t.bigInteger('created_at').notNullable()
    t.string('modified_by', 100)
    t.bigInteger('modified_at')
    t.primary(['tenant_id', 'id'])
  })
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.uuid('webhook_id').notNullable()
    t.uuid('event_id').notNullable()
    t.string('event_type', 100).notNullable()
    t.text('event').notNullable()
    t.string('status', 20).notNullable()
    t.integer('attempts').notNullable()
    t.bigInteger('next_attempt_at').notNullable()
    t.text('attempt_log').notNullable()
    t.bigInteger('created_at').notNullable()
    t.bigInteger('completed_at')
    t.index(['status', 'next_attempt_at'])
    t.index(['tenant_id', 'webhook_id', 'created_at'])
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_deliveries')
  await knex.schema.dropTable('webhooks')
}
