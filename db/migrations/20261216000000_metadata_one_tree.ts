import type { Knex } from 'knex'
import { bigintType, renameRebuilt, withoutRowid } from './dialect'

/**
 * `token_metadata` in one b-tree instead of two: its primary key becomes the
 * filter's order, `(tenant_key, key, value_folded, created_at, token_id)`, and
 * its index by that order goes (about 66 bytes per token and metadata entry).
 * Every other use knows the whole key: a further key of a filter is checked
 * with the token's id and `created_at`, and a token's rows are replaced or
 * deleted by its own metadata (tokens.repository.ts). So the foreign key to
 * `tokens`, whose cascade would need the old order to find a token's rows, goes
 * too: deleting a token deletes its rows explicitly, in the same transaction.
 */
const OLD_INDEX = 'token_metadata_tenant_key_key_value_folded_created_at_index'

async function replace(knex: Knex, createNext: string, columns: string): Promise<void> {
  await knex.raw(createNext)
  await knex.raw(`INSERT INTO token_metadata_next (${columns}) SELECT ${columns} FROM token_metadata ORDER BY ${columns}`)
  await knex.schema.dropTable('token_metadata')
  await renameRebuilt(knex, 'token_metadata_next', 'token_metadata')
}

export async function up(knex: Knex): Promise<void> {
  // WITHOUT ROWID as before: the table is its primary key's b-tree.
  await replace(
    knex,
    `CREATE TABLE token_metadata_next (
      tenant_key INTEGER NOT NULL REFERENCES tenants (tenant_key) ON DELETE CASCADE,
      key TEXT NOT NULL,
      value_folded TEXT NOT NULL,
      created_at ${bigintType(knex)} NOT NULL,
      token_id TEXT NOT NULL,
      PRIMARY KEY (tenant_key, key, value_folded, created_at, token_id)
    )${withoutRowid(knex)}`,
    'tenant_key, key, value_folded, created_at, token_id'
  )
}

export async function down(knex: Knex): Promise<void> {
  await replace(
    knex,
    `CREATE TABLE token_metadata_next (
      tenant_key INTEGER NOT NULL REFERENCES tenants (tenant_key) ON DELETE CASCADE,
      token_id TEXT NOT NULL,
      key TEXT NOT NULL,
      value_folded TEXT NOT NULL,
      created_at ${bigintType(knex)} NOT NULL,
      PRIMARY KEY (tenant_key, token_id, key),
      FOREIGN KEY (tenant_key, token_id) REFERENCES tokens (tenant_key, id) ON DELETE CASCADE
    )${withoutRowid(knex)}`,
    'tenant_key, token_id, key, value_folded, created_at'
  )
  await knex.raw(`CREATE INDEX ${OLD_INDEX} ON token_metadata (tenant_key, key, value_folded, created_at)`)
}
