import type { Knex } from 'knex'

/**
 * The request's trace id (`BT-TRACE-ID`) on each audit entry: `logs.trace`,
 * null for entries written before it and for entries no REST request made
 * (desktop, CLI, sweeps). Stored compactly by storage/trace-bytes.ts (a UUID
 * as its 16 bytes). Adding a nullable column rewrites no existing row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('logs', (t) => t.binary('trace'))
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE logs DROP COLUMN trace')
}
