import type { Knex } from 'knex'
import { bytesOfHex, hexOfBytes } from './dialect'

/**
 * Keyed hashes as their 32 bytes instead of 64 hex characters: a token's
 * fingerprint (its row and `tokens (fingerprint)`) and its search index hashes.
 * The API still shows them in hex; storage converts (tokens.repository.ts).
 *
 * Each column is replaced: a binary column is added (NOT NULL, with an empty
 * default only so that it can be added to existing rows) and filled in one
 * statement, the text column's indexes and the column itself dropped, the new
 * one renamed. A value that is not lowercase hex stops the migration before it changes anything.
 */
interface HashColumn {
  table: string
  column: string
  indexes: readonly (readonly string[])[]
}

const COLUMNS: readonly HashColumn[] = [
  { table: 'tokens', column: 'fingerprint', indexes: [['fingerprint']] },
  { table: 'token_search_indexes', column: 'index_hash', indexes: [['tenant_key', 'index_hash']] }
]

/** Whether every value of a text column is lowercase hex that converts to bytes and back unchanged. */
async function allHex(knex: Knex, table: string, column: string): Promise<boolean> {
  const bytes = bytesOfHex(knex, column)
  const [{ count }] = await knex(table).count({ count: '*' }).whereRaw(`${bytes} IS NULL OR length(${bytes}) * 2 <> length(${column}) OR ${column} <> lower(${column})`)
  return Number(count) === 0
}

async function convert(knex: Knex, { table, column, indexes }: HashColumn, toBinary: boolean): Promise<void> {
  const next = `${column}_next`
  await knex.schema.alterTable(table, (t) => (toBinary ? t.binary(next) : t.string(next, 100)).notNullable().defaultTo(''))
  await knex.raw(`UPDATE ${table} SET ${next} = ${toBinary ? bytesOfHex(knex, column) : hexOfBytes(knex, column)}`)
  await knex.schema.alterTable(table, (t) => indexes.forEach((columns) => t.dropIndex([...columns])))
  await knex.raw(`ALTER TABLE ${table} DROP COLUMN ${column}`)
  await knex.raw(`ALTER TABLE ${table} RENAME COLUMN ${next} TO ${column}`)
  await knex.schema.alterTable(table, (t) => indexes.forEach((columns) => t.index([...columns])))
}

export async function up(knex: Knex): Promise<void> {
  for (const { table, column } of COLUMNS) {
    if (!(await allHex(knex, table, column))) throw new Error(`${table}.${column} holds something other than lowercase hex; nothing was changed`)
  }
  for (const column of COLUMNS) await convert(knex, column, true)
}

export async function down(knex: Knex): Promise<void> {
  for (const column of COLUMNS) await convert(knex, column, false)
}
