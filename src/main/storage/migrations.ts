/**
 * The schema's migrations as knex runs them: the explicit, ordered list of
 * db/migrations/index.ts (a bundled app cannot scan a folder for them).
 */
import type { Knex } from 'knex'
import { migrations } from '../../../db/migrations'

/** The schema this version of Tessera brings a database to: its newest migration's timestamp. */
export const SCHEMA_LEVEL = Object.keys(migrations).sort().at(-1)!.slice(0, 14)

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations).sort(),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name]
}
