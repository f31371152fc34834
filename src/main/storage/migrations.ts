/**
 * The schema's migrations as knex runs them: the explicit, ordered list of
 * db/migrations/index.ts (a bundled app cannot scan a folder for them).
 */
import type { Knex } from 'knex'
import { migrations } from '../../../db/migrations'

/** The schema this version of Tessera brings a database to: its newest migration's timestamp. */
export const SCHEMA_LEVEL = levelOf(Object.keys(migrations).sort().at(-1)!)

/** The schema level of a migration's name (its timestamp); levels compare as their strings do. */
export function levelOf(migrationName: string): string {
  return migrationName.slice(0, 14)
}

/** Whether this version of Tessera has the migration (a database may have been migrated by a newer one). */
export function isKnownMigration(name: string): boolean {
  return Object.hasOwn(migrations, name)
}

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations).sort(),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name]
}
