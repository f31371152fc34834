import type { Knex } from 'knex'

/**
 * An audit entry's actor type as a one-byte code instead of its name
 * (`logs.actor_type` 'application' took 11 bytes of each entry an application
 * wrote): `logs.actor_type_code`, 1 application, 2 session, 3 user. The
 * entry's MAC covers the name, which storage gives back (logs.repository.ts).
 * An entry with any other actor type stops the migration before it changes anything.
 */
const CODES: Record<string, number> = { application: 1, session: 2, user: 3 }

const caseOf = (column: string, pairs: [string | number, string | number][]) =>
  `CASE ${column} ${pairs.map(([from, to]) => `WHEN ${typeof from === 'string' ? `'${from}'` : from} THEN ${typeof to === 'string' ? `'${to}'` : to}`).join(' ')} END`

export async function up(knex: Knex): Promise<void> {
  const [{ count }] = await knex('logs').count({ count: '*' }).whereNotNull('actor_type').whereNotIn('actor_type', Object.keys(CODES))
  if (Number(count) > 0) throw new Error('logs.actor_type holds a type other than application, session or user; nothing was changed')
  await knex.schema.alterTable('logs', (t) => t.smallint('actor_type_code'))
  await knex.raw(`UPDATE logs SET actor_type_code = ${caseOf('actor_type', Object.entries(CODES))} WHERE actor_type IS NOT NULL`)
  await knex.raw('ALTER TABLE logs DROP COLUMN actor_type')
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('logs', (t) => t.string('actor_type', 20))
  await knex.raw(`UPDATE logs SET actor_type = ${caseOf('actor_type_code', Object.entries(CODES).map(([name, code]) => [code, name]))} WHERE actor_type_code IS NOT NULL`)
  await knex.raw('ALTER TABLE logs DROP COLUMN actor_type_code')
}
