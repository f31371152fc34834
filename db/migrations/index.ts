import type { Knex } from 'knex'
import * as initialSchema from './20261125000000_initial_schema'

/**
 * Every migration, in order. Bundled builds cannot scan a folder, so new
 * migrations are listed here explicitly.
 */
export const migrations: Record<string, Knex.Migration> = {
  '20261125000000_initial_schema': initialSchema
}
