import type { Knex } from 'knex'

/**
 * The tamper-evident audit log. Each entry gets a MAC chained to its
 * predecessor's (`logs.mac`) and aggregated entries a `count`; the vault gets
 * the wrapped audit keys (MAC key and export signing key); `log_chain` keeps a
 * MAC'd checkpoint of the chain's head so deleting the newest entries shows.
 *
 * A master-key rotation stages the audit keys' new wrappings beside the
 * current ones (`*_next`), like the other keys of the vault.
 *
 * Keys need the master key, which a migration never sees: an existing vault's
 * keys are created, and its entries chained, the first time it is opened.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('vault', (t) => {
    t.binary('wrapped_audit_mac_key')
    t.binary('wrapped_audit_signing_key')
    t.binary('wrapped_audit_mac_key_next')
    t.binary('wrapped_audit_signing_key_next')
  })
  await knex.schema.alterTable('logs', (t) => {
    t.integer('count')
    t.binary('mac')
  })
  await knex.schema.createTable('log_chain', (t) => {
    t.bigInteger('checkpoint_seq').notNullable()
    t.binary('checkpoint_mac').notNullable()
    t.binary('checkpoint_tag').notNullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('log_chain')
  await knex.schema.alterTable('logs', (t) => {
    t.dropColumn('mac')
    t.dropColumn('count')
  })
  await knex.schema.alterTable('vault', (t) => {
    t.dropColumn('wrapped_audit_signing_key_next')
    t.dropColumn('wrapped_audit_mac_key_next')
    t.dropColumn('wrapped_audit_signing_key')
    t.dropColumn('wrapped_audit_mac_key')
  })
}
