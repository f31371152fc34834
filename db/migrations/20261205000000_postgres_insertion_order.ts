import type { Knex } from 'knex'
import { isPostgres } from './dialect'

/**
 * Lists break ties between tokens of the same millisecond by insertion order:
 * SQLite's rowid. PostgreSQL tables have no such column, so there tokens get a
 * sequence of their own (existing rows numbered in their current order).
 */
export async function up(knex: Knex): Promise<void> {
  if (isPostgres(knex)) await knex.raw('ALTER TABLE tokens ADD COLUMN seq bigserial')
}

export async function down(knex: Knex): Promise<void> {
  if (isPostgres(knex)) await knex.raw('ALTER TABLE tokens DROP COLUMN seq')
}
