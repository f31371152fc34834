import type { Knex } from 'knex'
import { isPostgres } from './dialect'

/**
 * E-mail addresses match with their ASCII letters in any case and every other character as it is, on
 * both engines (storage/dialect.ts's `foldedEmail`): `Alice@…` and `alice@…` are one address, `Ärger@…`
 * and `ärger@…` two. SQLite's `lower` folds ASCII alone, so its index (migration 20261205500000) already
 * holds one invitation per address so matched: nothing to do. PostgreSQL's `lower` follows the database's
 * collation, which may fold other letters too; the unique index of invitations is made again on `lower`
 * under `"C"`, which folds ASCII alone. It cannot fail on the rows already there: folding fewer letters
 * makes fewer addresses equal.
 */
export async function up(knex: Knex): Promise<void> {
  if (!isPostgres(knex)) return
  await knex.raw('DROP INDEX invitations_tenant_email_unique')
  await knex.raw('CREATE UNIQUE INDEX invitations_tenant_email_unique ON invitations (tenant_id, lower(email COLLATE "C"))')
}

/** Fails where the tenant holds invitations for two addresses that only the collation's `lower` makes equal (`Ärger@…`, `ärger@…`). */
export async function down(knex: Knex): Promise<void> {
  if (!isPostgres(knex)) return
  await knex.raw('DROP INDEX invitations_tenant_email_unique')
  await knex.raw('CREATE UNIQUE INDEX invitations_tenant_email_unique ON invitations (tenant_id, lower(email))')
}
