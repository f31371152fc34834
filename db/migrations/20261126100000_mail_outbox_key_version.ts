import type { Knex } from 'knex'

/**
 * Outbox bodies are sealed with the tenant's current data key; the version is
 * kept so a mail still waiting after a key rotation can be opened.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.integer('key_version').notNullable().defaultTo(1)
    t.index(['invitation_id'])
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.dropIndex(['invitation_id'])
    t.dropColumn('key_version')
  })
}
