/**
 * What differs between the two engines behind the storage seam, in one place:
 * SQLite (the embedded default, a file) and PostgreSQL (a team vault, a URL).
 * Repositories ask here instead of testing the engine themselves.
 */
import type { Knex } from 'knex'
import { types as pgTypes } from 'pg'
import { SCHEMA_LEVEL } from './migrations'

export type Engine = 'sqlite' | 'postgres'

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location)
}

export function engineOf(db: Knex): Engine {
  return db.client.config.client === 'pg' ? 'postgres' : 'sqlite'
}

const INT8 = 20
const NUMERIC = 1700

/** The `application_name` of a Tessera connection to PostgreSQL of schema `level`: `tessera schema <level>`, which compares as the levels do. */
export const schemaApplicationName = (level: string) => `tessera schema ${level}`
export const SCHEMA_APPLICATION_NAME = schemaApplicationName(SCHEMA_LEVEL)

/**
 * Connection settings for a PostgreSQL URL. 64-bit integers (sequence numbers,
 * millisecond times, counts) and sums of them (numeric) come back as numbers, as
 * SQLite gives them: every value the schema stores in one stays far below 2^53.
 */
export function postgresConnection(url: string): Knex.PgConnectionConfig {
  return {
    connectionString: url,
    // Names the schema this instance writes for, so that an upgrade can tell older instances still connected (database.ts).
    application_name: SCHEMA_APPLICATION_NAME,
    types: {
      getTypeParser: (oid: number, format?: string) => (oid === INT8 || oid === NUMERIC ? (value: string) => Number(value) : pgTypes.getTypeParser(oid, format as 'text'))
    }
  }
}

/**
 * Whether a catalogued audit message is stored as its one-byte code (message-codes.ts):
 * SQLite keeps a BLOB in the `message` column as it is, whatever the column's type. On
 * PostgreSQL the column is `varchar`, which holds text only: the message is stored as
 * its text, as it was before codes existed.
 */
export function storesMessageCodes(engine: Engine): boolean {
  return engine === 'sqlite'
}

/**
 * SQL for the e-mail address `expression` as addresses are matched: its ASCII letters lowercased and
 * every other character as it is, so `Alice@…` and `alice@…` are one address, `Ärger@…` and `ärger@…`
 * two. SQLite's `lower` folds ASCII alone; PostgreSQL's follows the collation (the database's, which may
 * fold `Ä` too), so it is given `"C"`, under which it folds ASCII alone as well. The unique index of
 * invitations by address is on this expression (migration 20261229000000), so a query of it can use it.
 */
export function foldedEmail(db: Knex, expression: string): string {
  return engineOf(db) === 'postgres' ? `lower(${expression} COLLATE "C")` : `lower(${expression})`
}

/** `query` narrowed to the rows whose e-mail address in `column` matches `email` (`foldedEmail`, both sides). */
export function whereEmailMatches(db: Knex, query: Knex.QueryBuilder, column: string, email: string): Knex.QueryBuilder {
  return query.whereRaw(`${foldedEmail(db, '??')} = ${foldedEmail(db, '?')}`, [column, email])
}

/** Advisory lock keys (PostgreSQL): one per thing only one instance may do at a time. */
export const MIGRATION_LOCK = 0x7e55e7a1
export const VAULT_CREATION_LOCK = 0x7e55e7a2
export const AUDIT_CHAIN_LOCK = 0x7e55e7a3
/** The class (first key) of the two-key advisory locks `lockName` takes: a key space apart from the one-key locks above. */
const NAMED_LOCK_CLASS = 0x7e55e7a3

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

/**
 * Whether an entity's audit entries are found through `log_entities`, which the
 * `index-logs` sweep folds behind the writers (SQLite), or through an index on
 * `logs` written with each entry (PostgreSQL, migration 20261225000000).
 */
export function foldsEntityIndex(db: Knex): boolean {
  return engineOf(db) === 'sqlite'
}

/**
 * Whether several service instances may share this database (PostgreSQL). Work that
 * must happen once (a sweep, a mail) is then claimed with a lease or a row lock;
 * a SQLite vault has one process (the vault lock), which needs neither.
 */
export function sharedByInstances(db: Knex): boolean {
  return engineOf(db) === 'postgres'
}

/**
 * `query` locking the rows it reads until the transaction ends (PostgreSQL's
 * `FOR UPDATE`), so a read-modify-write on one instance waits for another's; with
 * `skipLocked`, rows another transaction holds are passed over instead of waited for.
 * SQLite's single writer already serialises these: the query as is.
 */
export function lockingRows(db: Knex, query: Knex.QueryBuilder, { skipLocked = false } = {}): Knex.QueryBuilder {
  if (!sharedByInstances(db)) return query
  query.forUpdate()
  return skipLocked ? query.skipLocked() : query
}

/**
 * `query` narrowed to the rows whose `column` is one of `keys` (a subquery of a few values), each
 * looked up by its key. PostgreSQL plans `IN (subquery)` by its row estimates, and without
 * statistics may read the whole table to join it; `= any(array(…))` is one index lookup per key.
 * SQLite looks each value of `IN (subquery)` up by its key already.
 */
export function whereAmongKeys(db: Knex, query: Knex.QueryBuilder, column: string, keys: Knex.QueryBuilder): Knex.QueryBuilder {
  return engineOf(db) === 'postgres' ? query.whereRaw('?? = any(array(?))', [column, keys]) : query.whereIn(column, keys)
}

/** Takes the advisory lock `key` until the transaction `db` ends (PostgreSQL); SQLite's one writer needs none. */
export async function lockUntilCommit(db: Knex, key: number): Promise<void> {
  if (engineOf(db) === 'postgres') await db.raw('SELECT pg_advisory_xact_lock(?)', [key])
}

/**
 * Holds, until the transaction ends, a lock named by `parts` (PostgreSQL's
 * `pg_advisory_xact_lock` on a hash of them): a check-then-insert that no
 * constraint can express (deduplication) runs one at a time across instances.
 * SQLite: nothing to do, its single writer already runs them one at a time.
 */
export async function lockName(db: Knex, ...parts: string[]): Promise<void> {
  if (!sharedByInstances(db)) return
  await db.raw('select pg_advisory_xact_lock(?::int, hashtext(?))', [NAMED_LOCK_CLASS, parts.join(' ')])
}

/**
 * `lockName` for several names in one statement, taken in the order given (callers sort them, so
 * two transactions never wait on each other's). The locks are volatile calls, which PostgreSQL
 * evaluates after the `ORDER BY`, one row at a time.
 */
export async function lockNames(db: Knex, names: readonly (readonly string[])[]): Promise<void> {
  if (!sharedByInstances(db) || names.length === 0) return
  const joined = names.map((parts) => parts.join(' '))
  await db.raw('select pg_advisory_xact_lock(?::int, hashtext(name)) from unnest(?::text[]) with ordinality as names(name, position) order by position', [NAMED_LOCK_CLASS, joined])
}

/** `DELETE` of `query`'s rows, returning `columns` of the rows it deleted (knex returns only a count on SQLite). */
export async function deleteReturning<T>(db: Knex, query: Knex.QueryBuilder, columns: readonly string[]): Promise<T[]> {
  if (engineOf(db) === 'postgres') return (await query.delete().returning(columns as string[])) as T[]
  const { sql, bindings } = query.delete().toSQL()
  return (await db.raw(`${sql} returning ${columns.join(', ')}`, bindings)) as T[]
}
