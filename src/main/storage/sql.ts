/** Portable SQL helpers shared by the write queue and the repositories. */
import type { Knex } from 'knex'
import { COUNTED_ITEMS_LIMIT } from '../../shared/pagination'

/** Keeps SQLite below its bound-parameter limit whatever the column count. */
const MAX_PARAMETERS_PER_STATEMENT = 2000
const insertSqlCache = new Map<string, string>()

/**
 * Rows that add to a counter: a row whose `key` is already in the table adds its
 * `column` to the stored one (`INSERT … ON CONFLICT … DO UPDATE`, SQLite and PostgreSQL).
 */
export interface AddOnConflict {
  key: readonly string[]
  column: string
}

/** Counter rows added up per key: one row per counter (a statement may change a row only once in PostgreSQL). */
export function addUp(rows: readonly object[], { key, column }: AddOnConflict): object[] {
  const sums = new Map<string, Record<string, unknown>>()
  for (const row of rows as Record<string, unknown>[]) {
    const id = key.map((name) => row[name]).join('\u0000')
    const sum = sums.get(id)
    if (sum) sum[column] = (sum[column] as number) + (row[column] as number)
    else sums.set(id, { ...row })
  }
  return [...sums.values()]
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/

/** @throws TypeError unless the table and columns are plain identifiers: statements written as text name them as they are. */
export function assertIdentifiers(table: string, columns: readonly string[]): void {
  for (const name of [table, ...columns]) if (!IDENTIFIER.test(name)) throw new TypeError(`Bad identifier ${name}`)
}

/** The clause that turns an insert into an addition to existing counters. */
export function addOnConflictSql(table: string, { key, column }: AddOnConflict): string {
  return ` on conflict (${key.join(',')}) do update set ${column} = ${table}.${column} + excluded.${column}`
}

/** `INSERT … VALUES (…), (…)`, built once per shape: portable SQL, far cheaper than a builder per row. */
function multiRowInsertSql(table: string, columns: readonly string[], rowCount: number, addTo?: AddOnConflict): string {
  const cacheKey = `${table}|${columns.join(',')}|${rowCount}|${addTo ? 'add' : ''}`
  let sql = insertSqlCache.get(cacheKey)
  if (!sql) {
    const tuple = `(${columns.map(() => '?').join(',')})`
    sql = `insert into ${table} (${columns.join(',')}) values ${Array(rowCount).fill(tuple).join(',')}${addTo ? addOnConflictSql(table, addTo) : ''}`
    insertSqlCache.set(cacheKey, sql)
  }
  return sql
}

/**
 * Inserts rows with multi-row statements, in chunks; with `addTo`, rows add to the counters they name.
 * Each column's value is read from the row's property of the same name, or of the name `properties` gives in its place.
 */
export async function insertRows(
  db: Knex,
  table: string,
  columns: readonly string[],
  rows: readonly object[],
  addTo?: AddOnConflict,
  properties: readonly string[] = columns
): Promise<void> {
  if (addTo) rows = addUp(rows, addTo)
  const chunk = Math.max(1, Math.floor(MAX_PARAMETERS_PER_STATEMENT / columns.length))
  for (let start = 0; start < rows.length; start += chunk) {
    const slice = rows.slice(start, start + chunk)
    const bindings: Knex.RawBinding[] = []
    for (const row of slice) for (const property of properties) bindings.push(((row as Record<string, unknown>)[property] ?? null) as Knex.RawBinding)
    await db.raw(multiRowInsertSql(table, columns, slice.length, addTo), bindings)
  }
}

/** Whether an error is a uniqueness violation (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? ''
  return code === 'SQLITE_CONSTRAINT' || code.startsWith('SQLITE_CONSTRAINT_') || code === '23505'
}

/**
 * Whether an error is PostgreSQL ending a transaction that waited on another in a cycle
 * (deadlock, 40P01) or could not be serialised (40001): run again, it succeeds.
 */
export function isTransientConflict(error: unknown): boolean {
  const code = (error as { code?: string }).code
  return code === '40P01' || code === '40001'
}

/** Where-clause for rows that have not expired at `now` (no `expires_at`, or one after it). */
export function notExpiredAt(now: number): (query: Knex.QueryBuilder) => void {
  return (query) => {
    query.whereNull('expires_at').orWhere('expires_at', '>', now)
  }
}

/** The rows of `query`, counted up to `COUNTED_ITEMS_LIMIT + 1` (which stands for "more"), plus `beyond` more. */
export async function cappedCount(db: Knex, query: Knex.QueryBuilder, beyond = 0): Promise<number> {
  const [{ count }] = await db.from(query.select(db.raw('1')).limit(COUNTED_ITEMS_LIMIT + 1 + beyond).as('matching')).count({ count: '*' })
  return Number(count)
}
