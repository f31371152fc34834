import type { Knex } from 'knex'
import { bigintType } from './dialect'

/**
 * `token_search_indexes` in the order of the v2 token lists (newest first): each row
 * holds its token's `created_at`, and the index by value becomes
 * `(tenant_key, index_hash, created_at, token_id)`, so a search by data walks one
 * index range in list order and resumes after a cursor's position without sorting
 * what matches. Replaces `(tenant_key, index_hash)`, which it begins with.
 */
const OLD_INDEX = 'token_search_indexes_tenant_key_index_hash_index'
const NEW_INDEX = 'token_search_indexes_tenant_key_index_hash_created_at_token_id_index'

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE token_search_indexes ADD COLUMN created_at ${bigintType(knex)} NOT NULL DEFAULT 0`)
  await knex.raw(`UPDATE token_search_indexes SET created_at = (
    SELECT tokens.created_at FROM tokens WHERE tokens.tenant_key = token_search_indexes.tenant_key AND tokens.id = token_search_indexes.token_id)`)
  await knex.raw(`CREATE INDEX ${NEW_INDEX} ON token_search_indexes (tenant_key, index_hash, created_at, token_id)`)
  await knex.raw(`DROP INDEX ${OLD_INDEX}`)
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX ${OLD_INDEX} ON token_search_indexes (tenant_key, index_hash)`)
  await knex.raw(`DROP INDEX ${NEW_INDEX}`)
  await knex.raw('ALTER TABLE token_search_indexes DROP COLUMN created_at')
}
