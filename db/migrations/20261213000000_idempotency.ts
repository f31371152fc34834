import type { Knex } from 'knex'

/**
 * Idempotency keys (`BT-IDEMPOTENCY-KEY`): one row per tenant, caller and key,
 * kept 24 hours. While the first request runs, the row is a reservation
 * (no response yet); afterwards it holds the response, sealed with the tenant
 * data key since responses can carry keys and data.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.string('caller_id', 64).notNullable() // application or session id
    t.string('idempotency_key', 255).notNullable()
    t.uuid('reservation').notNullable() // the request that holds the key, so only it completes or releases it
    t.string('request_hash', 64) // keyed hash of method, path and body; set when the response is stored
    t.integer('status_code')
    t.integer('key_version')
    t.binary('sealed_response') // nonce ‖ XChaCha20-Poly1305(body), AD = tenant + reservation; key rotation re-seals it
    t.bigInteger('created_at').notNullable()
    t.bigInteger('expires_at').notNullable()
    t.primary(['tenant_id', 'caller_id', 'idempotency_key'])
    t.index(['expires_at'])
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys')
}
