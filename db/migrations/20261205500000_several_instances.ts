import type { Knex } from 'knex'

/**
 * Several service instances on one database (a team vault):
 * - `job_runs.leased_until`: the instance running a sweep holds its row's lease until
 *   then (epoch ms), so a sweep runs once per period across instances. A sweep that
 *   never completed has a row with a lease and no `last_run_at`.
 * - one invitation per e-mail address (case-insensitively) per tenant, held by the
 *   database, since two instances may create one at the same moment.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('job_runs', (t) => {
    t.bigInteger('leased_until')
    t.bigInteger('last_run_at').nullable().alter()
  })
  await knex.raw('CREATE UNIQUE INDEX invitations_tenant_email_unique ON invitations (tenant_id, lower(email))')
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX invitations_tenant_email_unique')
  await knex('job_runs').whereNull('last_run_at').delete()
  await knex.schema.alterTable('job_runs', (t) => {
    t.dropColumn('leased_until')
    t.bigInteger('last_run_at').notNullable().alter()
  })
}
