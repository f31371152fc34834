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
