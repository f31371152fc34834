import type { Knex } from 'knex'
import { bigintType, isPostgres, withoutRowid } from './dialect'

/** Each token type's default containers (domain/token-types.ts; a test holds the two equal). */
export const DEFAULT_CONTAINERS: Readonly<Record<string, readonly string[]>> = { token: ['/general/high/'], card: ['/pci/high/'], bank: ['/bank/high/'] }

/**
 * `token_containers`: one row per container of each token whose containers are
 * not its type's default, in the order a list reads them: `(tenant_key,
 * container, created_at, token_id)`. A list restricted by access rules to
 * some containers finds its candidates here (and, for a type whose default
 * containers a rule matches, through the tokens' type index) instead of
 * walking every token of the tenant. Tokens keeping their type's default
 * containers, most of them, get no row. On PostgreSQL the container is
 * compared byte by byte (`COLLATE "C"`), so a prefix is one range of the key.
 */
export async function up(knex: Knex): Promise<void> {
  const postgres = isPostgres(knex)
  await knex.raw(`CREATE TABLE token_containers (
    tenant_key INTEGER NOT NULL${postgres ? '' : ' REFERENCES tenants (tenant_key) ON DELETE CASCADE'},
    container TEXT${postgres ? ' COLLATE "C"' : ''} NOT NULL,
    created_at ${bigintType(knex)} NOT NULL,
    token_id TEXT NOT NULL,
    PRIMARY KEY (tenant_key, container, created_at, token_id)
  )${withoutRowid(knex)}`)
  const elements = postgres ? 'json_array_elements_text(t.containers::json) c(value)' : 'json_each(t.containers) c'
  const defaults = Object.entries(DEFAULT_CONTAINERS).map(([type, containers]) => knex.raw('(t.type = ? and t.containers = ?)', [type, JSON.stringify(containers)]).toQuery())
  await knex.raw(`INSERT INTO token_containers (tenant_key, container, created_at, token_id)
    SELECT DISTINCT t.tenant_key, c.value, t.created_at, t.id FROM tokens t, ${elements}
    WHERE NOT (${defaults.join(' or ')})`)
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('token_containers')
}
