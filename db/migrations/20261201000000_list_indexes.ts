import type { Knex } from 'knex'
import { bigintType, uuidType, withoutRowid } from './dialect'

/**
 * Lists that answer in time proportional to the page (docs/performance.md, "Lists at scale").
 * - `token_metadata`: one row per metadata entry of a token, its value case-folded
 *   (JavaScript `toLowerCase`, the filter's folding), with the token's `created_at` so a
 *   filter walks one index range newest first, and counts without reading tokens.
 *   Filled with the token, in its transaction.
 * - `token_counts` and `log_counts`: rows per tenant and type, kept in the same
 *   transaction as the change, so an unfiltered list (or one by type) is not counted row by row.
 * - `tokens (tenant_id, type, created_at)` and `logs (tenant_id, entity_type, created_at)`:
 *   the type filters in list order.
 * - Deduplication finds a fingerprint through `tokens (fingerprint)`: fingerprints are keyed
 *   per tenant, so the tenant and type beside it in the index only took room.
 * - The expiry indexes hold only the rows that have a deadline (most tokens have none).
 */
export async function up(knex: Knex): Promise<void> {
  // WITHOUT ROWID: a further key of a filter is checked in the primary key's b-tree alone, which holds the value.
  await knex.raw(`CREATE TABLE token_metadata (
    tenant_id ${uuidType(knex)} NOT NULL,
    token_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value_folded TEXT NOT NULL,
    created_at ${bigintType(knex)} NOT NULL,
    PRIMARY KEY (tenant_id, token_id, key),
    FOREIGN KEY (tenant_id, token_id) REFERENCES tokens (tenant_id, id) ON DELETE CASCADE
  )${withoutRowid(knex)}`)
  await knex.raw('CREATE INDEX token_metadata_tenant_id_key_value_folded_created_at_index ON token_metadata (tenant_id, key, value_folded, created_at)')
  await backfillMetadata(knex)

  await counterTable(knex, 'token_counts', 'type')
  await knex.raw('INSERT INTO token_counts (tenant_id, type, count) SELECT tenant_id, type, count(*) FROM tokens GROUP BY tenant_id, type')
  await counterTable(knex, 'log_counts', 'entity_type')
  await knex.raw('INSERT INTO log_counts (tenant_id, entity_type, count) SELECT tenant_id, entity_type, count(*) FROM logs GROUP BY tenant_id, entity_type')

  await knex.schema.alterTable('tokens', (t) => {
    t.index(['tenant_id', 'type', 'created_at'])
    t.dropIndex(['tenant_id', 'type', 'fingerprint'])
    t.index(['fingerprint'])
    t.dropIndex(['expires_at'])
    t.dropIndex(['cvc_expires_at'])
  })
  await knex.raw('CREATE INDEX tokens_expires_at_index ON tokens (expires_at) WHERE expires_at IS NOT NULL')
  await knex.raw('CREATE INDEX tokens_cvc_expires_at_index ON tokens (cvc_expires_at) WHERE cvc_expires_at IS NOT NULL')
  await knex.schema.alterTable('logs', (t) => t.index(['tenant_id', 'entity_type', 'created_at']))
}

function counterTable(knex: Knex, name: string, kind: string): Promise<void> {
  return knex.schema.createTable(name, (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
    t.string(kind, 50).notNullable()
    t.bigInteger('count').notNullable()
    t.primary(['tenant_id', kind])
  })
}

/** The metadata of existing tokens, a thousand tokens at a time in primary-key order. */
async function backfillMetadata(knex: Knex): Promise<void> {
  let after: { tenant_id: string; id: string } | undefined
  for (;;) {
    const query = knex('tokens').select('tenant_id', 'id', 'metadata', 'created_at').orderBy(['tenant_id', 'id']).limit(1000)
    if (after) query.whereRaw('(tenant_id > ? OR (tenant_id = ? AND id > ?))', [after.tenant_id, after.tenant_id, after.id])
    const tokens: { tenant_id: string; id: string; metadata: string; created_at: number }[] = await query
    if (tokens.length === 0) return
    const rows = tokens.flatMap((token) =>
      Object.entries(JSON.parse(token.metadata) as Record<string, string>).map(([key, value]) => ({
        tenant_id: token.tenant_id,
        token_id: token.id,
        key,
        value_folded: value.toLowerCase(),
        created_at: token.created_at
      }))
    )
    for (let start = 0; start < rows.length; start += 300) await knex('token_metadata').insert(rows.slice(start, start + 300))
    after = tokens[tokens.length - 1]
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('logs', (t) => t.dropIndex(['tenant_id', 'entity_type', 'created_at']))
  await knex.raw('DROP INDEX tokens_expires_at_index')
  await knex.raw('DROP INDEX tokens_cvc_expires_at_index')
  await knex.schema.alterTable('tokens', (t) => {
    t.dropIndex(['tenant_id', 'type', 'created_at'])
    t.dropIndex(['fingerprint'])
    t.index(['tenant_id', 'type', 'fingerprint'])
    t.index(['expires_at'])
    t.index(['cvc_expires_at'])
  })
  await knex.schema.dropTable('log_counts')
  await knex.schema.dropTable('token_counts')
  await knex.schema.dropTable('token_metadata')
}
