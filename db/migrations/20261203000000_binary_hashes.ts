import type { Knex } from 'knex'

/**
 * Keyed hashes as their 32 bytes instead of 64 hex characters: a token's
 * fingerprint (its row and `tokens (fingerprint)`) and its search index hashes.
 * The API still shows them in hex; storage converts (tokens.repository.ts).
 *
 * Each column is replaced: a binary column is added (NOT NULL, with an empty
 * default only so that it can be added to existing rows) and filled, the text
 * column's indexes and the column itself dropped, the new one renamed.
 */
interface HashColumn {
  table: string
  column: string
  /** The columns that find a row. */
  key: readonly string[]
  indexes: readonly (readonly string[])[]
}

const COLUMNS: readonly HashColumn[] = [
  { table: 'tokens', column: 'fingerprint', key: ['tenant_key', 'id'], indexes: [['fingerprint']] },
  { table: 'token_search_indexes', column: 'index_hash', key: ['tenant_key', 'token_id', 'index_hash'], indexes: [['tenant_key', 'index_hash']] }
]

/** Rows converted per statement. */
const CHUNK = 500

async function convert(knex: Knex, { table, column, key, indexes }: HashColumn, toBinary: boolean): Promise<void> {
  const next = `${column}_next`
  await knex.schema.alterTable(table, (t) => (toBinary ? t.binary(next) : t.string(next, 100)).notNullable().defaultTo(''))
  for (;;) {
    const rows: Record<string, unknown>[] = await knex(table).select(...key, column).where(next, '').limit(CHUNK)
    if (rows.length === 0) break
    for (const row of rows) {
      const value = row[column] as string | Buffer
      // Only what Tessera wrote is here: hex of a hash going in, its bytes coming back.
      if (toBinary && !/^([0-9a-f]{2})+$/.test(value as string)) throw new Error(`${table}.${column} holds something other than hex`)
      if (!toBinary && value.length === 0) throw new Error(`${table}.${column} holds no bytes`)
      await knex(table)
        .where(Object.fromEntries(key.map((name) => [name, row[name]])))
        .update({ [next]: toBinary ? Buffer.from(value as string, 'hex') : Buffer.from(value as Buffer).toString('hex') })
    }
  }
  await knex.schema.alterTable(table, (t) => indexes.forEach((columns) => t.dropIndex([...columns])))
  await knex.raw(`ALTER TABLE ${table} DROP COLUMN ${column}`)
  await knex.raw(`ALTER TABLE ${table} RENAME COLUMN ${next} TO ${column}`)
  await knex.schema.alterTable(table, (t) => indexes.forEach((columns) => t.index([...columns])))
}

export async function up(knex: Knex): Promise<void> {
  for (const column of COLUMNS) await convert(knex, column, true)
}

export async function down(knex: Knex): Promise<void> {
  for (const column of COLUMNS) await convert(knex, column, false)
}
