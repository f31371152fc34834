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
const NUMERIC = 1700

/**
 * Connection settings for a PostgreSQL URL. 64-bit integers (sequence numbers,
 * millisecond times, counts) and sums of them (numeric) come back as numbers, as
 * SQLite gives them: every value the schema stores in one stays far below 2^53.
 */
export function postgresConnection(url: string): Knex.PgConnectionConfig {
  return {
    connectionString: url,
    types: {
      getTypeParser: (oid: number, format?: string) => (oid === INT8 || oid === NUMERIC ? (value: string) => Number(value) : pgTypes.getTypeParser(oid, format as 'text'))
    }
  }
}

/** Advisory lock keys (PostgreSQL): one per thing only one instance may do at a time. */
export const MIGRATION_LOCK = 0x7e55e7a1
export const VAULT_CREATION_LOCK = 0x7e55e7a2
export const AUDIT_CHAIN_LOCK = 0x7e55e7a3

/**
 * `column` as a term the planner cannot serve from an index: SQLite's unary `+`,
 * where an index it would prefer without statistics is the slow path. PostgreSQL
 * plans by statistics (and has no unary `+` for text or uuid): the column itself.
 */
export function unindexed(db: Knex, column: string): string {
  return engineOf(db) === 'postgres' ? column : `+${column}`
}

/** The column giving a token table's insertion order: SQLite's rowid, PostgreSQL's `seq` (added for it alone). */
export function insertionOrder(db: Knex, table: string): string {
  return engineOf(db) === 'postgres' ? `${table}.seq` : `${table}.rowid`
}

/** A subquery's rows of the strings of the JSON array in `column`, as `alias.value`. */
export function jsonArrayElements(db: Knex, column: string, alias: string): string {
  return engineOf(db) === 'postgres' ? `json_array_elements_text(${column}::json) ${alias}(value)` : `json_each(${column}) ${alias}`
}
