/**
 * What differs between the two engines behind the storage seam, in one place:
 * SQLite (the embedded default, a file) and PostgreSQL (a team vault, a URL).
 * Repositories ask here instead of testing the engine themselves.
 */
import type { Knex } from 'knex'
import { types as pgTypes } from 'pg'

export type Engine = 'sqlite' | 'postgres'

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location)
}

export function engineOf(db: Knex): Engine {
  return db.client.config.client === 'pg' ? 'postgres' : 'sqlite'
}

const INT8 = 20

/**
 * Connection settings for a PostgreSQL URL. 64-bit integers (sequence numbers,
 * millisecond times, counts) come back as numbers, as SQLite gives them: every
 * value the schema stores in one stays far below 2^53.
 */
export function postgresConnection(url: string): Knex.PgConnectionConfig {
  return {
    connectionString: url,
    types: {
      getTypeParser: (oid: number, format?: string) => (oid === INT8 ? (value: string) => Number(value) : pgTypes.getTypeParser(oid, format as 'text'))
    }
  }
}

/** Advisory lock keys (PostgreSQL): one per thing only one instance may do at a time. */
export const MIGRATION_LOCK = 0x7e55e7a1
export const VAULT_CREATION_LOCK = 0x7e55e7a2
