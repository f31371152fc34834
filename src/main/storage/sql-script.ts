/**
 * One write batch as one SQL script, run in a single call: by SQLite, one trip
 * through the driver's thread pool instead of one per statement; by
 * PostgreSQL, one round trip (a simple-protocol query of several statements)
 * instead of one per statement. Under load each trip waits behind the HTTP
 * work queued on the event loop, so a batch of ten statements cost ten such
 * waits; as a script it costs one.
 *
 * Values are written as literals the engine cannot misread.
 * - SQLite: integers as digits, bytes as hex blobs, text quoted with its single
 *   quotes doubled (SQLite knows no other escape), or as a hex blob cast to text
 *   when it holds a NUL byte, which would end the script early.
 * - PostgreSQL: every value as an untyped string constant, which the column's
 *   type reads with its input function exactly as it reads a bound parameter
 *   (node-postgres sends parameters as such strings): escape strings (`E'…'`,
 *   whose meaning does not depend on `standard_conforming_strings`) with
 *   backslashes and quotes escaped and a NUL byte written as `\x00`, which
 *   PostgreSQL refuses in text as it refuses a bound NUL; bytes in bytea's hex form.
 * Nothing a caller sends can change the SQL.
 */
import type { Knex } from 'knex'
import { addOnConflictSql, addUp, type AddOnConflict } from './sql'

export interface InsertStatement {
  table: string
  columns: readonly string[]
  rows: readonly object[]
  /** Rows that add to existing counters instead of failing on their key. */
  addTo?: AddOnConflict
}

/** What an SQLite text literal cannot hold as it is: a quote (doubled) or a NUL byte (hex-cast). */
const NEEDS_ESCAPING = /['\u0000]/

/** An SQL literal for a stored value; throws on anything the schema does not hold. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError('Only integers are stored as numbers')
    return String(value)
  }
  if (typeof value === 'boolean') return value ? '1' : '0'
  if (typeof value === 'string') {
    // Most text holds neither: one scan instead of two.
    if (!NEEDS_ESCAPING.test(value)) return `'${value}'`
    if (value.includes('\u0000')) return `CAST(X'${Buffer.from(value, 'utf8').toString('hex')}' AS TEXT)`
    return `'${value.replaceAll("'", "''")}'`
  }
  if (value instanceof Uint8Array) return `X'${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}'`
  throw new TypeError(`Cannot store a ${typeof value} as an SQL literal`)
}

/** A PostgreSQL literal for a stored value, read by the column's type as a bound parameter would be; throws on anything the schema does not hold. */
export function postgresLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('Only finite numbers are stored')
    return `'${String(value)}'`
  }
  if (typeof value === 'boolean') return value ? "'true'" : "'false'"
  if (typeof value === 'string') return `E'${value.replace(POSTGRES_ESCAPED, (character) => POSTGRES_ESCAPES[character])}'`
  if (value instanceof Uint8Array) return `E'\\\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}'`
  throw new TypeError(`Cannot store a ${typeof value} as an SQL literal`)
}

const POSTGRES_ESCAPED = /[\\'\u0000]/g
const POSTGRES_ESCAPES: Record<string, string> = { '\\': '\\\\', "'": "''", '\u0000': '\\x00' }

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/

/**
 * The statement's text, appended literal by literal: an array per row joined, then the
 * rows joined, cost about a microsecond more per token and audit entry.
 */
function insertSql({ table, columns, rows, addTo }: InsertStatement, literal: (value: unknown) => string = sqlLiteral): string {
  for (const name of [table, ...columns]) if (!IDENTIFIER.test(name)) throw new TypeError(`Bad identifier ${name}`)
  const values = addTo ? addUp(rows, addTo) : rows
  let sql = `INSERT INTO ${table} (${columns.join(',')}) VALUES `
  for (let r = 0; r < values.length; r++) {
    const row = values[r] as Record<string, unknown>
    sql += r === 0 ? '(' : ',('
    for (let c = 0; c < columns.length; c++) sql += (c === 0 ? '' : ',') + literal(row[columns[c]])
    sql += ')'
  }
  return `${sql}${addTo ? addOnConflictSql(table, addTo) : ''};`
}

/** The driver's connection object, as knex's pool hands it out. */
export type RawSqlite = { exec(sql: string, done: (error: Error | null) => void): void }

function exec(connection: RawSqlite, sql: string): Promise<void> {
  return new Promise((resolve, reject) => connection.exec(sql, (error) => (error ? reject(error) : resolve())))
}

/**
 * Runs the inserts as one transaction on a connection taken from knex's
 * writer pool. On failure the transaction is rolled back and the error rethrown.
 */
export async function runInsertScript(connection: RawSqlite, statements: readonly InsertStatement[]): Promise<void> {
  const script = `BEGIN IMMEDIATE;${statements.filter((s) => s.rows.length > 0).map((statement) => insertSql(statement)).join('')}COMMIT;`
  try {
    await exec(connection, script)
  } catch (error) {
    await exec(connection, 'ROLLBACK;').catch(() => undefined) // already rolled back if COMMIT itself failed
    throw error
  }
}

/** node-postgres's client, as knex's pool hands it out: a query without parameters goes as one simple-protocol message. */
export type RawPostgres = { query(sql: string): Promise<unknown> }

/**
 * SQL a PostgreSQL script runs first, inside its transaction, to fail with
 * `STALE_STATE` when what the batch was prepared against (the audit chain's
 * head) has moved on; built by the repository that owns the table.
 */
export interface ScriptGuard {
  readonly sql: string
}

/** The SQLSTATE a ScriptGuard raises: the batch is prepared again from the committed state. */
export const STALE_STATE = 'TSS01'

export function isStaleState(error: unknown): boolean {
  return (error as { code?: string }).code === STALE_STATE
}

/**
 * Runs the inserts as one transaction, in one round trip, on the writer's
 * connection, after `guard` if any. On failure the transaction is rolled back
 * and the error rethrown.
 */
export async function runPostgresInsertScript(connection: RawPostgres, statements: readonly InsertStatement[], guard?: ScriptGuard): Promise<void> {
  const inserts = statements.filter((s) => s.rows.length > 0).map((statement) => insertSql(statement, postgresLiteral))
  const script = `BEGIN;${guard?.sql ?? ''}${inserts.join('')}COMMIT;`
  try {
    await connection.query(script)
  } catch (error) {
    await connection.query('ROLLBACK;').catch(() => undefined) // nothing to roll back if COMMIT itself failed
    throw error
  }
}

/** How the write queue can send a batch of inserts as one script: `sqlite3`, `pg`, or not at all. */
export function scriptEngine(db: Knex): 'sqlite' | 'postgres' | undefined {
  const client = db.client.config.client
  return client === 'sqlite3' ? 'sqlite' : client === 'pg' ? 'postgres' : undefined
}
