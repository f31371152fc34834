/**
 * The SQL work of API requests, measured where the clock cannot reach it: PostgreSQL's
 * entries walked (EXPLAIN ANALYZE) or SQLite's virtual machine steps (its command-line
 * shell), for tests that a request's work does not grow with the vault.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import type { Knex } from 'knex'
import { DATABASE_FILE } from '../../../src/main/bootstrap/vault'
import { sql } from '../../../src/main/storage/connections'
import { engineOf } from '../../../src/main/storage/dialect'
import { statementsRun, type Statement } from '../../helpers/database'
import { onPostgres } from '../../helpers/postgres'
import { service } from './fixture'

/** A `PlanNode` of PostgreSQL's EXPLAIN (ANALYZE, FORMAT JSON), the fields read here. */
interface PlanNode {
  'Node Type': string
  'Actual Rows': number
  'Actual Loops': number
  'Rows Removed by Filter'?: number
  Plans?: PlanNode[]
}

/**
 * The entries a statement walked in the index (or table) it walks, as PostgreSQL counts them: each scan run
 * once, its rows kept and those its filter removed. (Scans run once per row of another, such as each token
 * looked up by id, are that walk's entries again.)
 */
export function entriesWalked(node: PlanNode): number {
  const walks = ['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Index Scan'].includes(node['Node Type']) && node['Actual Loops'] === 1
  const own = walks ? node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) : 0
  return own + (node.Plans ?? []).reduce((sum, child) => sum + entriesWalked(child), 0)
}

/** A value as an SQLite literal, for the command-line shell. */
const sqliteLiteral = (value: Knex.RawBinding) =>
  Buffer.isBuffer(value) ? `x'${value.toString('hex')}'` : typeof value === 'string' ? `'${value.replaceAll("'", "''")}'` : String(value)

/** The virtual machine steps SQLite takes to run `statement` on the vault's file, as its shell's `.stats` counts them: its work, which grows with the entries it walks. */
function sqliteSteps(statement: Statement): number {
  const parameters = statement.bindings.map((value, i) => `insert into temp.sqlite_parameters values ('?${i + 1}', ${sqliteLiteral(value)});`)
  // The shell binds each anonymous `?` to the parameter named by its position.
  const script = ['.parameter init', ...parameters, '.stats on', `${statement.sql};`].join('\n')
  const output = execFileSync('sqlite3', ['-readonly', join(service.dataDir, DATABASE_FILE)], { input: script, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] })
  return Number(/Virtual Machine Steps:\s+(\d+)/.exec(output)?.[1] ?? NaN)
}

/**
 * What `work` resolves with, and the work of the statements it runs on the read pool:
 * PostgreSQL's entries walked, or SQLite's virtual machine steps.
 */
export async function sqlWork<T>(work: () => Promise<T>): Promise<{ result: T; work: number }> {
  const reader = sql(service.host.vault.db.reader)
  let result: T | undefined
  let total = 0
  for (const statement of await statementsRun(reader, async () => (result = await work()))) {
    if (engineOf(reader) === 'sqlite') total += sqliteSteps(statement)
    else total += entriesWalked((await reader.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql.replace(/\$\d+/g, '?')}`, statement.bindings)).rows[0]['QUERY PLAN'][0].Plan)
  }
  return { result: result as T, work: total }
}

/** PostgreSQL's statistics of the tables, as its autovacuum keeps them in a vault in use: it plans by them. */
async function analyze(): Promise<void> {
  const reader = sql(service.host.vault.db.reader)
  if (engineOf(reader) === 'postgres') await reader.raw('ANALYZE')
}

/** What `measure` finds before and after `grow` adds to the vault, each time on fresh statistics. */
export async function beforeAndAfter<T>(measure: () => Promise<T>, grow: () => Promise<void>): Promise<{ before: T; after: T }> {
  await analyze()
  const before = await measure()
  await grow()
  await analyze()
  return { before, after: await measure() }
}

/**
 * SQLite's work is read through its command-line shell (Debian's `sqlite3`, which `.ci/run` installs):
 * without it, outside CI, the SQLite run of this test is skipped.
 */
export const measurable = onPostgres || Boolean(process.env.CI) || spawnSync('sqlite3', ['-version']).status === 0
