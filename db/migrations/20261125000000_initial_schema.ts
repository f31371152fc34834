import type { Knex } from 'knex'

/**
 * The whole data model of the REST interface. Times are epoch milliseconds
 * (bigint) so expiry comparisons are plain integer comparisons on every backend.
 * Sensitive values never appear here in plaintext: token data is sealed, secrets
 * (API keys, session keys, nonces, invitation links) are keyed hashes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('vault', (t) => {
    t.integer('id').primary()
    t.integer('format_version').notNullable()
    // The key that hashes secrets, wrapped by the master key; unwrapping it proves the master key.
    t.binary('wrapped_secret_hash_key').notNullable()
    t.bigInteger('created_at').notNullable()
  })

  await knex.schema.createTable('tenants', (t) => {
    t.uuid('id').primary()
    t.string('name', 200).notNullable()
    t.uuid('owner_user_id')
    t.bigInteger('created_at').notNullable()
    t.bigInteger('modified_at')
  })

  await knex.schema.createTable('tenant_keys', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.string('purpose', 20).notNullable() // 'data' (rotatable) or 'fingerprint' (never rotated)
    t.integer('version').notNullable()
    t.binary('wrapped_key').notNullable()
    t.bigInteger('created_at').notNullable()
    t.primary(['tenant_id', 'purpose', 'version'])
  })

  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary()
    t.string('email', 320).unique()
    t.string('first_name', 200)
    t.string('last_name', 200)
    t.string('picture', 2000)
    t.bigInteger('created_at').notNullable()
  })

  await knex.schema.createTable('members', (t) => {
    t.uuid('id').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.uuid('user_id').notNullable().references('users.id')
    t.string('role', 20).notNullable()
    t.uuid('created_by')
    t.bigInteger('created_at').notNullable()
    t.uuid('modified_by')
    t.bigInteger('modified_at')
    t.unique(['tenant_id', 'user_id'])
  })

  await knex.schema.createTable('invitations', (t) => {
    t.uuid('id').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.string('email', 320).notNullable()
    t.string('status', 20).notNullable() // persisted PENDING/EXPIRED; reads derive EXPIRED from expires_at
    t.string('link_hash', 100).unique() // hash of the current link's secret; null once consumed
    t.bigInteger('expires_at').notNullable()
    t.uuid('created_by')
    t.bigInteger('created_at').notNullable()
    t.uuid('modified_by')
    t.bigInteger('modified_at')
    t.index(['tenant_id', 'created_at'])
  })

  await knex.schema.createTable('applications', (t) => {
    t.uuid('id').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.string('name', 200).notNullable()
    t.string('type', 20).notNullable()
    t.text('permissions').notNullable() // JSON array
    t.text('rules').notNullable() // JSON array
    t.string('key_hash', 100).notNullable().unique()
    t.bigInteger('expires_at')
    t.uuid('created_by')
    t.bigInteger('created_at').notNullable()
    t.uuid('modified_by')
    t.bigInteger('modified_at')
    t.index(['tenant_id', 'created_at'])
    t.index(['expires_at'])
  })

  await knex.schema.createTable('sessions', (t) => {
    t.uuid('id').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.uuid('application_id').notNullable() // creator (public application); no FK: sessions outlive nothing but themselves
    t.string('key_hash', 100).notNullable().unique()
    t.string('nonce_hash', 100).notNullable().unique()
    t.uuid('authorized_by')
    t.bigInteger('authorized_at')
    t.text('permissions').notNullable() // JSON array, empty until authorized
    t.text('rules').notNullable() // JSON array
    t.bigInteger('expires_at').notNullable()
    t.bigInteger('created_at').notNullable()
    t.index(['expires_at'])
  })

  await knex.schema.createTable('tokens', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.string('id', 400).notNullable()
    t.string('type', 50).notNullable()
    t.integer('key_version').notNullable()
    t.binary('sealed_data').notNullable() // nonce ‖ XChaCha20-Poly1305(data), AD = tenant + token id
    t.string('fingerprint', 100).notNullable()
    t.text('fingerprint_expression').notNullable()
    t.text('mask') // JSON of the mask expression(s); expressions, not values
    t.text('containers').notNullable() // JSON array
    t.text('metadata').notNullable() // JSON object
    t.text('search_indexes') // JSON array of expressions
    t.bigInteger('expires_at')
    t.uuid('created_by')
    t.bigInteger('created_at').notNullable()
    t.uuid('modified_by')
    t.bigInteger('modified_at')
    t.primary(['tenant_id', 'id'])
    t.index(['tenant_id', 'type', 'fingerprint'])
    t.index(['tenant_id', 'created_at'])
    t.index(['expires_at'])
  })

  await knex.schema.createTable('token_search_indexes', (t) => {
    t.uuid('tenant_id').notNullable()
    t.string('token_id', 400).notNullable()
    t.string('index_hash', 100).notNullable() // keyed BLAKE2b of the rendered index expression
    t.foreign(['tenant_id', 'token_id']).references(['tenant_id', 'id']).inTable('tokens').onDelete('CASCADE')
    t.index(['tenant_id', 'index_hash'])
    t.index(['tenant_id', 'token_id'])
  })

  await knex.schema.createTable('token_tombstones', (t) => {
    t.bigIncrements('seq').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.string('token_id', 400).notNullable()
    t.string('type', 50).notNullable()
    t.bigInteger('created_at').notNullable()
    t.bigInteger('deleted_at').notNullable()
    t.uuid('deleted_by')
    t.string('reason', 20).notNullable() // 'deleted' or 'expired'
    t.index(['tenant_id', 'token_id'])
  })

  await knex.schema.createTable('logs', (t) => {
    t.bigIncrements('seq').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.uuid('actor_id')
    t.string('actor_type', 20)
    t.string('entity_type', 50).notNullable()
    t.string('entity_id', 400).notNullable()
    t.string('operation', 30).notNullable()
    t.string('message', 500).notNullable()
    t.bigInteger('created_at').notNullable()
    t.index(['tenant_id', 'created_at'])
    t.index(['tenant_id', 'entity_type', 'entity_id'])
  })

  await knex.schema.createTable('mail_outbox', (t) => {
    t.uuid('id').primary()
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.string('recipient', 320).notNullable()
    t.string('subject', 300).notNullable()
    t.binary('sealed_body').notNullable() // the body carries a one-time link: sealed like token data
    t.string('status', 20).notNullable() // PENDING, SENT, CANCELLED
    t.integer('attempts').notNullable().defaultTo(0)
    t.bigInteger('next_attempt_at').notNullable()
    t.string('last_error', 200) // an error code, never a message with content
    t.uuid('invitation_id')
    t.bigInteger('created_at').notNullable()
    t.bigInteger('sent_at')
    t.index(['status', 'next_attempt_at'])
  })

  await knex.schema.createTable('job_runs', (t) => {
    t.string('name', 100).primary()
    t.bigInteger('last_run_at').notNullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'job_runs',
    'mail_outbox',
    'logs',
    'token_tombstones',
    'token_search_indexes',
    'tokens',
    'sessions',
    'applications',
    'invitations',
    'members',
    'users',
    'tenant_keys',
    'tenants',
    'vault'
  ]) {
    await knex.schema.dropTableIfExists(table)
  }
}
