import type { Knex } from 'knex'

/**
 * Key rotation and CVC retention.
 * - `tenant_keys.wrapped_key_next` and `vault.wrapped_secret_hash_key_next` hold
 *   the keys wrapped under a new master key while a master rotation is between
 *   its two commits, so whichever master key survives a crash opens the vault.
 * - `key_rotations` records each data-key rotation and its progress; the
 *   re-encryption pass itself resumes from `key_version` of each row.
 * - `retired_data_keys` keeps what a retired version was and the report that
 *   proved nothing used it; the wrapped key itself is deleted.
 * - `sealed_settings` holds secrets of the settings (the SMTP password),
 *   sealed with the tenant's data key like token data.
 * - `tokens.cvc_expires_at`: when the sweep removes a card's CVC. Cards stored
 *   before it are due at once: the sweep opens each, removes a CVC if it holds
 *   one, and clears the mark of the others.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('vault', (t) => {
    t.binary('wrapped_secret_hash_key_next')
  })
  await knex.schema.alterTable('tenant_keys', (t) => {
    t.binary('wrapped_key_next')
  })
  await knex.schema.alterTable('tokens', (t) => {
    t.bigInteger('cvc_expires_at')
    t.index(['cvc_expires_at'])
    t.index(['tenant_id', 'key_version'])
  })
  await knex('tokens').where('type', 'card').update({ cvc_expires_at: Date.now() })
  await knex.schema.createTable('key_rotations', (t) => {
    t.increments('id').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.integer('target_version').notNullable()
    t.text('counts_before').notNullable() // JSON: objects per kind and version when the rotation started
    t.bigInteger('started_at').notNullable()
    t.bigInteger('finished_at')
    t.index(['tenant_id', 'finished_at'])
  })
  await knex.schema.createTable('retired_data_keys', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.integer('version').notNullable()
    t.string('key_check_value', 64).notNullable()
    t.bigInteger('created_at').notNullable()
    t.bigInteger('retired_at').notNullable()
    t.text('report').notNullable() // JSON: the retirement report
    t.primary(['tenant_id', 'version'])
  })
  await knex.schema.createTable('sealed_settings', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.string('name', 100).notNullable()
    t.integer('key_version').notNullable()
    t.binary('sealed_value').notNullable() // nonce ‖ XChaCha20-Poly1305(value), AD = tenant + name
    t.bigInteger('modified_at').notNullable()
    t.primary(['tenant_id', 'name'])
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sealed_settings')
  await knex.schema.dropTable('retired_data_keys')
  await knex.schema.dropTable('key_rotations')
  await knex.schema.alterTable('tokens', (t) => {
    t.dropIndex(['tenant_id', 'key_version'])
    t.dropIndex(['cvc_expires_at'])
    t.dropColumn('cvc_expires_at')
  })
  await knex.schema.alterTable('tenant_keys', (t) => t.dropColumn('wrapped_key_next'))
  await knex.schema.alterTable('vault', (t) => t.dropColumn('wrapped_secret_hash_key_next'))
}
