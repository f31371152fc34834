import type { Knex } from 'knex'
import { isPostgres } from './dialect'

/**
 * The token id columns the v2 lists and search order by and page through (`created_at desc, id desc`, a cursor
 * compared with `<` and `>=`): the tokens' own, their search index entries' and their metadata entries'.
 */
const TOKEN_ID_COLUMNS: readonly (readonly [table: string, column: string])[] = [
  ['tokens', 'id'],
  ['token_search_indexes', 'token_id'],
  ['token_metadata', 'token_id']
]

/**
 * PostgreSQL compares these token ids byte by byte (`COLLATE "C"`), whatever the database's collation: tokens
 * of one millisecond then come in UTF-8's byte order, code point order, as on SQLite, where text compares so.
 * They followed the database's default collation, so a database created with another (ICU's en-US, a glibc
 * `en_US.UTF-8`) ordered them, and paged through them, as its locale does. Only the collation changes: the
 * rows stay as they are, and the indexes holding the columns are built again (the key of `tokens` with the
 * foreign key of `token_search_indexes` on it). SQLite: nothing to do.
 */
export async function up(knex: Knex): Promise<void> {
  if (isPostgres(knex)) await collate(knex, ' COLLATE "C"')
}

/** Back to the database's default collation. */
export async function down(knex: Knex): Promise<void> {
  if (isPostgres(knex)) await collate(knex, '')
}

/** Gives each column `collation` (none: its type's default), keeping its type as the catalogue has it. */
async function collate(knex: Knex, collation: string): Promise<void> {
  for (const [table, column] of TOKEN_ID_COLUMNS) {
    const { rows } = await knex.raw('SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = ?::regclass AND attname = ?', [table, column])
    await knex.raw(`ALTER TABLE ?? ALTER COLUMN ?? TYPE ${(rows as { type: string }[])[0].type}${collation}`, [table, column])
  }
}
