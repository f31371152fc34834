import type { Knex } from 'knex'
import { isPostgres } from './dialect'

/**
 * PostgreSQL: the tables written per token or per audit entry no longer
 * reference `tenants`. PostgreSQL checks a foreign key with a trigger per
 * inserted row, a `SELECT … FOR KEY SHARE` of the tenant's row: in a batch of
 * 1,000 rows the check costs as much as the insert itself or more in a narrow
 * table (logs, log_entities, token_metadata) and adds some 40% to the insert
 * into `tokens`; and since every writer locks the same tenant row, concurrent
 * writers turn its lock into a MultiXact. The constraint guarded nothing the
 * service needs: tenants are never deleted (so their cascade never runs), and
 * the service writes only the authenticated tenant's key, which exists.
 *
 * Kept: `token_search_indexes` → `tokens`, whose cascade deletes a deleted
 * token's search indexes, and the tenant foreign keys of the tables written at
 * most once per request (members, applications, sessions, idempotency keys,
 * tombstones, …), where the check is one index probe.
 *
 * SQLite keeps its schema: there a foreign key check is one b-tree probe of
 * `tenants`, without locks, and dropping a constraint means rebuilding the
 * table, which for tables of millions of rows costs more than it saves.
 */
const TABLES = ['tokens', 'token_search_indexes', 'token_metadata', 'token_counts', 'logs', 'log_entities', 'log_counts', 'log_hour_counts']

/** The names of `table`'s foreign keys to `tenants` (knex's names depend on the tables' rebuilds). */
async function tenantForeignKeys(knex: Knex, table: string): Promise<string[]> {
  const { rows } = await knex.raw(`SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid = ?::regclass AND confrelid = 'tenants'::regclass`, [table])
  return (rows as { conname: string }[]).map((row) => row.conname)
}

export async function up(knex: Knex): Promise<void> {
  if (!isPostgres(knex)) return
  for (const table of TABLES) {
    for (const name of await tenantForeignKeys(knex, table)) await knex.raw('ALTER TABLE ?? DROP CONSTRAINT ??', [table, name])
  }
}

export async function down(knex: Knex): Promise<void> {
  if (!isPostgres(knex)) return
  for (const table of TABLES) {
    if ((await tenantForeignKeys(knex, table)).length > 0) continue
    await knex.raw('ALTER TABLE ?? ADD CONSTRAINT ?? FOREIGN KEY (tenant_key) REFERENCES tenants (tenant_key) ON DELETE CASCADE', [table, `${table}_tenant_key_foreign`])
  }
}
