import type { Knex } from 'knex'

/**
 * Token intents: card or bank data held for at most a day until a token is
 * made of it. The data is sealed like a token's (tenant data key, version
 * kept for rotation); `details` holds only what may be shown (bin, last four…).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('token_intents', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.uuid('id').notNullable()
    t.string('type', 50).notNullable()
    t.integer('key_version').notNullable()
    t.binary('sealed_data').notNullable() // nonce ‖ XChaCha20-Poly1305(data), AD = tenant + intent id
    t.string('fingerprint', 100).notNullable()
    t.text('details').notNullable() // JSON object of the masked card or bank details
    t.uuid('created_by')
    t.bigInteger('created_at').notNullable()
    t.bigInteger('expires_at').notNullable()
    t.primary(['tenant_id', 'id'])
    t.index(['expires_at'])
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('token_intents')
}
