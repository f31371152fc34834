import type { Knex } from 'knex'
import { bytesOfHex, hexOfBytes, isPostgres } from './dialect'

/**
 * Actor ids as their 16 bytes instead of 36 characters: who created and last
 * changed a token (`tokens.created_by`, `tokens.modified_by`) and who did what
 * an audit entry records (`logs.actor_id`, now `logs.actor`: the entry's
 * MAC covers the id's text, which storage gives back exactly; see
 * storage/uuid-bytes.ts). Every stored id must be a lowercase UUID, or the
 * migration stops before changing anything.
 *
 * Each column is replaced: a binary column is added and filled in one
 * statement, the text column dropped and the new one renamed.
 */
interface ActorColumn {
  table: string
  text: string
  bytes: string
}

const COLUMNS: readonly ActorColumn[] = [
  { table: 'tokens', text: 'created_by', bytes: 'created_by' },
  { table: 'tokens', text: 'modified_by', bytes: 'modified_by' },
  { table: 'logs', text: 'actor_id', bytes: 'actor' }
]

/** A UUID column's text: PostgreSQL's `uuid` type gives it out as its lowercase canonical text. */
const textOf = (knex: Knex, column: string) => (isPostgres(knex) ? `${column}::text` : column)

/** SQL for a UUID's text to its 16 bytes. */
function toBytesSql(knex: Knex, column: string): string {
  return bytesOfHex(knex, `replace(${textOf(knex, column)}, '-', '')`)
}

/** SQL for 16 bytes to the UUID's lowercase text (a `uuid` on PostgreSQL, the type of the column it goes back to). */
function toTextSql(knex: Knex, column: string): string {
  const hex = hexOfBytes(knex, column)
  const part = (start: number, length: number) => `substr(${hex}, ${start}, ${length})`
  const text = `${part(1, 8)} || '-' || ${part(9, 4)} || '-' || ${part(13, 4)} || '-' || ${part(17, 4)} || '-' || ${part(21, 12)}`
  return isPostgres(knex) ? `CAST(${text} AS uuid)` : text
}

/** Whether every non-null value of a text column is a lowercase UUID. */
async function allCanonical(knex: Knex, table: string, uuidColumn: string): Promise<boolean> {
  const column = textOf(knex, uuidColumn)
  const dashes = [9, 14, 19, 24].map((position) => `substr(${column}, ${position}, 1) <> '-'`).join(' OR ')
  const [{ count }] = await knex(table)
    .count({ count: '*' })
    .whereNotNull(uuidColumn)
    .andWhereRaw(`(length(${column}) <> 36 OR ${column} <> lower(${column}) OR ${dashes} OR length(${toBytesSql(knex, uuidColumn)}) <> 16 OR ${toBytesSql(knex, uuidColumn)} IS NULL)`)
  return Number(count) === 0
}

async function replaceColumn(knex: Knex, table: string, from: string, to: string, type: 'binary' | 'uuid', valueSql: string): Promise<void> {
  const next = `${to}_next`
  await knex.schema.alterTable(table, (t) => (type === 'binary' ? t.binary(next) : t.uuid(next)))
  await knex.raw(`UPDATE ${table} SET ${next} = ${valueSql} WHERE ${from} IS NOT NULL`)
  await knex.raw(`ALTER TABLE ${table} DROP COLUMN ${from}`)
  await knex.raw(`ALTER TABLE ${table} RENAME COLUMN ${next} TO ${to}`)
}

export async function up(knex: Knex): Promise<void> {
  for (const { table, text } of COLUMNS) {
    if (!(await allCanonical(knex, table, text))) throw new Error(`${table}.${text} holds an id that is not a lowercase UUID; nothing was changed`)
  }
  for (const { table, text, bytes } of COLUMNS) await replaceColumn(knex, table, text, bytes, 'binary', toBytesSql(knex, text))
}

export async function down(knex: Knex): Promise<void> {
  for (const { table, text, bytes } of COLUMNS) await replaceColumn(knex, table, bytes, text, 'uuid', toTextSql(knex, bytes))
}
