/**
 * One write batch as one SQL script, run in a single call: by SQLite, one trip
 * through the driver's thread pool instead of one per statement. Under load
 * each trip waits behind the HTTP work queued on the event loop, so a batch of
 * ten statements cost ten such waits; as a script it costs one. (PostgreSQL
 * sends its batch in one round trip too, with the rows bound: postgres-batch.ts.)
 *
 * Values are written as literals SQLite cannot misread: integers as digits,
 * bytes as hex blobs, text quoted with its single quotes doubled (SQLite knows
 * no other escape), or as a hex blob cast to text when it holds a NUL byte,
 * which would end the script early. Nothing a caller sends can change the SQL.
 */
import type { Knex } from 'knex'
import { addOnConflictSql, addUp, assertIdentifiers, type AddOnConflict } from './sql'

export interface InsertStatement {
  table: string
  columns: readonly string[]
  /**
   * The row property each column's value is read from, in the columns' order; by default
   * the column's own name. For a row that holds a column's stored form apart from the value
   * it stands for, which the sealer reads (the audit log's message: message-codes.ts).
   */
  properties?: readonly string[]
  rows: readonly object[]
  /** Rows that add to existing counters instead of failing on their key. */
  addTo?: AddOnConflict
}

/** The bytes in hexadecimal; a Buffer (every MAC, actor and trace id of the audit log) without a view made of it first. */
const hex = (value: Uint8Array) => (Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)).toString('hex')

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
  if (value instanceof Uint8Array) return `X'${hex(value)}'`
  throw new TypeError(`Cannot store a ${typeof value} as an SQL literal`)
}

function insertSql({ table, columns, properties = columns, rows, addTo }: InsertStatement): string {
  assertIdentifiers(table, columns)
  return `INSERT INTO ${table} (${columns.join(',')}) VALUES ${tuples(addTo ? addUp(rows, addTo) : rows, properties)}${addTo ? addOnConflictSql(table, addTo) : ''};`
}

/**
 * `(…),(…)`: one tuple per row, built by concatenation. A read of a 100-token page
 * writes 100 audit entries of 12 columns each, and a closure and an array per row
 * cost more than the literals themselves.
 */
function tuples(rows: readonly object[], properties: readonly string[]): string {
  let text = ''
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index] as Record<string, unknown>
    text += index === 0 ? '(' : ',('
    for (let column = 0; column < properties.length; column++) text += (column === 0 ? '' : ',') + sqlLiteral(row[properties[column]])
    text += ')'
  }
  return text
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

/**
 * The statement a PostgreSQL batch (postgres-batch.ts) runs first, inside its
 * transaction, to fail with `STALE_STATE` when what the batch was prepared
 * against (the audit chain's head) has moved on; built by the repository that
 * owns the table.
 */
export interface ScriptGuard {
  /** One statement with parameters ($1, $2, …): its text is the same for every batch, so it is prepared once per connection. */
  readonly text: string
  /** Its parameters: a Buffer goes in binary form (bytea), a string in text form. */
  readonly values: readonly (Buffer | string)[]
}

/** The SQLSTATE a ScriptGuard raises (written into the PostgreSQL function that raises it, migration 20261224000000): the batch is prepared again from the committed state. */
export const STALE_STATE = 'TSS01'

export function isStaleState(error: unknown): boolean {
  return (error as { code?: string }).code === STALE_STATE
}

/** How the write queue can send a batch of inserts as one script: `sqlite3`, `pg`, or not at all. */
export function scriptEngine(db: Knex): 'sqlite' | 'postgres' | undefined {
  const client = db.client.config.client
  return client === 'sqlite3' ? 'sqlite' : client === 'pg' ? 'postgres' : undefined
}
