/**
 * A write batch on PostgreSQL in one round trip, with its rows bound rather
 * than written into the SQL. Each table's rows go as one
 * `INSERT … SELECT * FROM unnest($1::type[], $2::type[], …)`, a column per
 * array parameter (postgres-arrays.ts), so the statement's text depends only on
 * the table and its columns: it is prepared once per connection, and
 * PostgreSQL parses, analyses and plans it once instead of reading a script
 * whose size grows with the batch (a thousand rows of literals cost the backend
 * more to parse and plan than to insert).
 *
 * The batch is sent as extended-protocol messages written together and ended
 * by one Sync: `BEGIN`, the guard, the inserts (one per table), `COMMIT`, each a
 * Bind and Execute (with its Parse the first time on the connection: all are
 * prepared statements). PostgreSQL answers them in order
 * and, after an error, skips everything up to the Sync, so the transaction
 * writes all or nothing; the caller then rolls it back.
 */
import { arrayParameter, type ArrayParameter, type ColumnType } from './postgres-arrays'
import type { InsertStatement, ScriptGuard } from './sql-script'
import { addOnConflictSql, addUp, assertIdentifiers } from './sql'

/** node-postgres's protocol connection (`client.connection`), as far as a batch writes to it. */
interface ProtocolConnection {
  parse(message: { text: string; name?: string }): void
  bind(message: { statement?: string; values: readonly ArrayParameter[] }): void
  execute(message: { portal?: string; rows?: number }): void
  close(message: { type: 'S'; name: string }): void
  sync(): void
  stream: { cork?(): void; uncork?(): void }
}

/**
 * node-postgres's client, as knex's pool hands it out: a string query goes as one
 * simple-protocol message; an object with `submit` writes its own messages and is
 * told of the answers (node-postgres's "submittable", as pg-cursor uses).
 */
export type RawPostgres = {
  query(sql: string): Promise<unknown>
  query(submittable: Submittable): unknown
}

/** The handlers node-postgres calls on the submittable it is running. */
interface Submittable {
  /** The statements it sends, joined as a script would be: for logs and for tests that watch the connection. */
  readonly text: string
  submit(connection: ProtocolConnection): Error | null
  handleRowDescription(): void
  handleDataRow(): void
  handleCommandComplete(): void
  handleEmptyQuery(): void
  handlePortalSuspended(): void
  handleCopyInResponse(): void
  handleCopyData(): void
  handleError(error: Error): void
  handleReadyForQuery(): void
}

/** A statement of the batch: its text, its prepared name if it has one, and its parameters. */
interface Step {
  text: string
  name?: string
  values: readonly ArrayParameter[]
}

/** Column types by table, per connection (the catalog is read once per table on each). */
const columnTypes = new WeakMap<RawPostgres, Map<string, Map<string, ColumnType>>>()
/** Statements prepared on each connection, by name. */
const prepared = new WeakMap<RawPostgres, Set<string>>()
/** Names given to statement texts, shared by connections. */
const statementNames = new Map<string, string>()
/** Beyond this many shapes a statement goes unnamed (parsed each time) rather than filling the server's memory. */
const MAX_PREPARED = 200

/**
 * Runs the inserts as one transaction, in one round trip, on the writer's
 * connection, after `guard` if any. On failure the transaction is rolled back
 * and the error rethrown.
 */
export async function runPostgresBatch(connection: RawPostgres, statements: readonly InsertStatement[], guard?: ScriptGuard): Promise<void> {
  const inserts = await insertSteps(connection, statements)
  const steps = [BEGIN, ...(guard ? [preparedStep(guard.text, guard.values)] : []), ...inserts, COMMIT]
  try {
    await pipeline(connection, steps)
  } catch (error) {
    await connection.query('ROLLBACK').catch(() => undefined) // nothing to roll back if COMMIT itself failed
    throw error
  }
}

/**
 * The inserts and COMMIT in one round trip, in the transaction open on the
 * connection; its owner rolls back when this rejects.
 */
export async function commitPostgresInserts(connection: RawPostgres, statements: readonly InsertStatement[]): Promise<void> {
  await pipeline(connection, [...(await insertSteps(connection, statements)), COMMIT])
}

/**
 * The inserts alone, in one round trip, in the transaction open on the
 * connection: its owner commits, or rolls back when this rejects (PostgreSQL
 * has then aborted the transaction).
 */
export async function runPostgresInserts(connection: RawPostgres, statements: readonly InsertStatement[]): Promise<void> {
  const inserts = await insertSteps(connection, statements)
  if (inserts.length > 0) await pipeline(connection, inserts)
}

async function insertSteps(connection: RawPostgres, statements: readonly InsertStatement[]): Promise<Step[]> {
  const inserts: Step[] = []
  for (const statement of statements) if (statement.rows.length > 0) inserts.push(await insertStep(connection, statement))
  return inserts
}

/** One table's rows as an `unnest` insert: the statement for its table and columns, and a column array each. */
async function insertStep(connection: RawPostgres, { table, columns, properties = columns, rows, addTo }: InsertStatement): Promise<Step> {
  assertIdentifiers(table, columns)
  const types = await typesOf(connection, table)
  const typed = columns.map((column) => {
    const type = types.get(column)
    if (!type) throw new TypeError(`No column ${column} in ${table}`)
    return type
  })
  const added = (addTo ? addUp(rows, addTo) : rows) as readonly Record<string, unknown>[]
  const values = properties.map((property, index) => arrayParameter(typed[index], added.map((row) => row[property])))
  const text =
    `INSERT INTO ${table} (${columns.join(',')}) SELECT * FROM unnest(${typed.map((type, index) => `$${index + 1}::${type.name}[]`).join(',')})` +
    (addTo ? addOnConflictSql(table, addTo) : '')
  return preparedStep(text, values)
}

/** A step whose statement is prepared once per connection (while fewer than MAX_PREPARED texts have names). */
function preparedStep(text: string, values: readonly ArrayParameter[]): Step {
  let name = statementNames.get(text)
  if (!name && statementNames.size < MAX_PREPARED) statementNames.set(text, (name = `tessera_statement_${statementNames.size + 1}`))
  return { text, name, values }
}

// Prepared too: parsing even `BEGIN` afresh costs the backend more than binding it.
const BEGIN = preparedStep('BEGIN', [])
const COMMIT = preparedStep('COMMIT', [])

/** The table's columns and their types (the base type: the column's own length limit applies on insert). */
async function typesOf(connection: RawPostgres, table: string): Promise<Map<string, ColumnType>> {
  let tables = columnTypes.get(connection)
  if (!tables) columnTypes.set(connection, (tables = new Map()))
  let types = tables.get(table)
  if (!types) {
    const { rows } = (await connection.query(
      `SELECT attname AS column, atttypid::int AS oid, format_type(atttypid, NULL) AS name FROM pg_attribute WHERE attrelid = '${table}'::regclass AND attnum > 0 AND NOT attisdropped`
    )) as { rows: { column: string; oid: number; name: string }[] }
    types = new Map(rows.map((row) => [row.column, { oid: row.oid, name: row.name }]))
    tables.set(table, types)
  }
  return types
}

/**
 * Sends the steps as one pipeline ended by a Sync and resolves at its ReadyForQuery,
 * or rejects with the first error. A named statement not yet known to be prepared on
 * this connection is closed (a no-op when absent) and parsed before its first Bind.
 */
function pipeline(connection: RawPostgres, steps: readonly Step[]): Promise<void> {
  let known = prepared.get(connection)
  if (!known) prepared.set(connection, (known = new Set()))
  const parsing = steps.filter((step) => step.name && !known.has(step.name)).map((step) => step.name!)
  return new Promise((resolve, reject) => {
    const ignore = () => undefined
    const submittable: Submittable = {
      text: steps.map((step) => `${step.text};`).join(''),
      submit(protocol) {
        protocol.stream.cork?.()
        try {
          for (const step of steps) {
            if (step.name && parsing.includes(step.name)) {
              protocol.close({ type: 'S', name: step.name })
              protocol.parse({ text: step.text, name: step.name })
            } else if (!step.name) {
              protocol.parse({ text: step.text })
            }
            protocol.bind({ statement: step.name, values: step.values })
            protocol.execute({})
          }
          protocol.sync()
        } finally {
          protocol.stream.uncork?.()
        }
        return null
      },
      handleRowDescription: ignore,
      handleDataRow: ignore,
      handleCommandComplete: ignore,
      handleEmptyQuery: ignore,
      handlePortalSuspended: ignore,
      handleCopyInResponse: ignore,
      handleCopyData: ignore,
      // node-postgres reports the error at once; PostgreSQL skips the rest of the pipeline up to the Sync.
      // Which statements exist now is not known (those of this pipeline, or all of them if the error was a
      // missing one): every statement is closed and parsed again on its next use, which costs one parse each.
      handleError(error) {
        known.clear()
        reject(error)
      },
      handleReadyForQuery() {
        for (const name of parsing) known.add(name)
        resolve()
      }
    }
    connection.query(submittable)
  })
}
