/** The next version's migration (tessera.cjs): a table of its own, which tells whether it was applied. */
import type { Knex } from 'knex'

export const NEXT_MIGRATION = '29990101000000_next_version'
export const NEXT_LEVEL = NEXT_MIGRATION.slice(0, 14)
export const NEXT_TABLE = 'next_version_marker'

export const nextMigration: Knex.Migration = {
  up: (knex) => knex.schema.createTable(NEXT_TABLE, (table) => table.integer('id')),
  down: (knex) => knex.schema.dropTable(NEXT_TABLE)
}
