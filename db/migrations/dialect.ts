/**
 * The few things the migrations write differently for SQLite and PostgreSQL;
 * everything else is knex's schema builder, which means the same on both.
 */
import type { Knex } from 'knex'

export function isPostgres(knex: Knex): boolean {
  return knex.client.config.client === 'pg'
}

/**
 * SQLite: store the table in its primary key's b-tree (no rowid tree beside it),
 * so an index-shaped table is stored once. PostgreSQL tables are heaps with the
 * key beside them whatever one writes: nothing to add.
 */
export function withoutRowid(knex: Knex): string {
  return isPostgres(knex) ? '' : ' WITHOUT ROWID'
}

/** The column type of knex's `uuid()`, for columns written in raw SQL that refer to one. */
export function uuidType(knex: Knex): string {
  return isPostgres(knex) ? 'uuid' : 'TEXT'
}

/** A 64-bit integer column (sequence numbers, counts): SQLite's INTEGER is one, PostgreSQL's is 32 bits. */
export function bigintType(knex: Knex): string {
  return isPostgres(knex) ? 'bigint' : 'INTEGER'
}

/** SQL for the bytes that lowercase hex text in `column` stands for. */
export function bytesOfHex(knex: Knex, column: string): string {
  return isPostgres(knex) ? `decode(${column}, 'hex')` : `unhex(${column})`
}

/** SQL for the lowercase hex text of the bytes in `column`. */
export function hexOfBytes(knex: Knex, column: string): string {
  return isPostgres(knex) ? `encode(${column}, 'hex')` : `lower(hex(${column}))`
}

/**
 * Gives a table rebuilt under a temporary name (created beside the old one,
 * filled, the old one dropped) its own name. On PostgreSQL its primary key's
 * index and its sequences are relations named after the temporary name, which a
 * later rebuild would take again: they are renamed with it.
 */
export async function renameRebuilt(knex: Knex, from: string, to: string): Promise<void> {
  await knex.schema.renameTable(from, to)
  if (!isPostgres(knex)) return
  const { rows } = await knex.raw(
    `SELECT c.relname, c.relkind FROM pg_class c
      WHERE left(c.relname, length(?)) = ?
        AND (c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = ?::regclass)
          OR c.oid IN (SELECT objid FROM pg_depend WHERE refobjid = ?::regclass AND classid = 'pg_class'::regclass AND deptype = 'a'))`,
    [`${from}_`, `${from}_`, to, to]
  )
  for (const { relname, relkind } of rows as { relname: string; relkind: string }[]) {
    await knex.raw(`ALTER ${relkind === 'S' ? 'SEQUENCE' : 'INDEX'} ?? RENAME TO ??`, [relname, `${to}${relname.slice(from.length)}`])
  }
}

/**
 * After rows were copied into a table with their own values of a serial column:
 * PostgreSQL's sequence continues past them (SQLite's AUTOINCREMENT follows by itself).
 */
export async function continueSequence(knex: Knex, table: string, column: string): Promise<void> {
  if (isPostgres(knex)) await knex.raw(`SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max(??), 0) + 1, false) FROM ??`, [table, column, column, table])
}
