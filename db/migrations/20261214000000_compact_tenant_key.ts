import type { Knex } from 'knex'
import { bigintType, continueSequence, isPostgres, renameRebuilt, uuidType, withoutRowid } from './dialect'

/**
 * A compact tenant key in the tables that grow with the vault. Each tenant
 * gets a small integer, `tenants.tenant_key`, and the tables with a row per
 * token or per audit entry (and their counters) hold it instead of the
 * 36-character UUID `tenant_id`, which every row and every index of them
 * repeated (about 290 bytes per token with its create entry). The UUID stays
 * the tenant's public id; storage maps one to the other (storage/tenant-keys.ts).
 *
 * Each table is rebuilt: created anew beside the old one, filled from it,
 * the old one dropped (children before parents) and the new one renamed,
 * then its indexes built. `down` rebuilds them the same way with `tenant_id`.
 * On PostgreSQL, `tokens` keeps its insertion order (`seq`), and serial
 * columns continue after the rows copied.
 */
type TenantColumn = 'tenant_id' | 'tenant_key'

interface Rebuilt {
  name: string
  /** The columns besides the tenant's, as both versions hold them. */
  columns(knex: Knex): readonly string[]
  /** A serial column, whose sequence must continue after the copied rows. */
  serial?: string
  create(knex: Knex, name: string, tenant: TenantColumn): Promise<unknown>
  indexes(knex: Knex, tenant: TenantColumn): Promise<unknown>
}

/** The tenant's column, referencing the tenant. */
function tenantColumn(t: Knex.CreateTableBuilder, tenant: TenantColumn): void {
  if (tenant === 'tenant_key') t.integer('tenant_key').notNullable().references('tenants.tenant_key').onDelete('CASCADE')
  else t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE')
}

const tenantColumnSql = (knex: Knex, tenant: TenantColumn) =>
  tenant === 'tenant_key' ? 'tenant_key INTEGER NOT NULL REFERENCES tenants (tenant_key) ON DELETE CASCADE' : `tenant_id ${uuidType(knex)} NOT NULL REFERENCES tenants (id) ON DELETE CASCADE`

const TOKEN_COLUMNS = [
  'id', 'type', 'key_version', 'sealed_data', 'fingerprint', 'fingerprint_expression', 'mask', 'containers', 'metadata',
  'search_indexes', 'expires_at', 'cvc_expires_at', 'created_by', 'created_at', 'modified_by', 'modified_at'
]

/** A counter table: a count per tenant and `keys` (`hour` a number, the others names). */
function counters(name: string, keys: readonly string[]): Rebuilt {
  return {
    name,
    columns: () => [...keys, 'count'],
    create: (knex, table, tenant) =>
      knex.schema.createTable(table, (t) => {
        tenantColumn(t, tenant)
        for (const key of keys) (key === 'hour' ? t.bigInteger(key) : t.string(key, 50)).notNullable()
        t.bigInteger('count').notNullable()
        t.primary([tenant, ...keys])
      }),
    indexes: async () => undefined
  }
}

/** Parents before children. */
const TABLES: readonly Rebuilt[] = [
  {
    name: 'tokens',
    // PostgreSQL's insertion order for lists (SQLite's is the rowid, which the copy keeps in order).
    columns: (knex) => (isPostgres(knex) ? [...TOKEN_COLUMNS, 'seq'] : TOKEN_COLUMNS),
    serial: 'seq',
    create: (knex, table, tenant) =>
      knex.schema.createTable(table, (t) => {
        if (isPostgres(knex)) t.bigIncrements('seq', { primaryKey: false })
        tenantColumn(t, tenant)
        t.string('id', 400).notNullable()
        t.string('type', 50).notNullable()
        t.integer('key_version').notNullable()
        t.binary('sealed_data').notNullable() // nonce ‖ XChaCha20-Poly1305(data), AD = tenant + token id
        t.string('fingerprint', 100).notNullable()
        t.text('fingerprint_expression').notNullable()
        t.text('mask')
        t.text('containers').notNullable()
        t.text('metadata').notNullable()
        t.text('search_indexes')
        t.bigInteger('expires_at')
        t.bigInteger('cvc_expires_at')
        t.uuid('created_by')
        t.bigInteger('created_at').notNullable()
        t.uuid('modified_by')
        t.bigInteger('modified_at')
        t.primary([tenant, 'id'])
      }),
    indexes: (knex, tenant) =>
      knex.schema.alterTable('tokens', (t) => {
        t.index([tenant, 'created_at'])
        t.index([tenant, 'type', 'created_at'])
        t.index([tenant, 'key_version'])
        t.index(['fingerprint'])
        // Only the rows that have a deadline (most tokens have none).
        t.index(['expires_at'], 'tokens_expires_at_index', { predicate: knex.whereNotNull('expires_at') })
        t.index(['cvc_expires_at'], 'tokens_cvc_expires_at_index', { predicate: knex.whereNotNull('cvc_expires_at') })
      })
  },
  {
    name: 'token_search_indexes',
    columns: () => ['token_id', 'index_hash'],
    create: (knex, table, tenant) =>
      knex.schema.createTable(table, (t) => {
        tenantColumn(t, tenant)
        t.string('token_id', 400).notNullable()
        t.string('index_hash', 100).notNullable() // keyed BLAKE2b of the rendered index expression
        t.foreign([tenant, 'token_id']).references([tenant, 'id']).inTable('tokens_next').onDelete('CASCADE')
      }),
    indexes: (knex, tenant) =>
      knex.schema.alterTable('token_search_indexes', (t) => {
        t.index([tenant, 'index_hash'])
        t.index([tenant, 'token_id'])
      })
  },
  {
    name: 'token_metadata',
    columns: () => ['token_id', 'key', 'value_folded', 'created_at'],
    // WITHOUT ROWID, as before: a further key of a filter is checked in the primary key's b-tree alone.
    create: (knex, table, tenant) =>
      knex.raw(`CREATE TABLE ${table} (
        ${tenantColumnSql(knex, tenant)},
        token_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value_folded TEXT NOT NULL,
        created_at ${bigintType(knex)} NOT NULL,
        PRIMARY KEY (${tenant}, token_id, key),
        FOREIGN KEY (${tenant}, token_id) REFERENCES tokens_next (${tenant}, id) ON DELETE CASCADE
      )${withoutRowid(knex)}`),
    indexes: (knex, tenant) => knex.schema.alterTable('token_metadata', (t) => t.index([tenant, 'key', 'value_folded', 'created_at']))
  },
  counters('token_counts', ['type']),
  {
    name: 'logs',
    columns: () => ['seq', 'actor_id', 'actor_type', 'entity_type', 'entity_id', 'operation', 'message', 'created_at', 'count', 'mac'],
    serial: 'seq',
    create: (knex, table, tenant) =>
      knex.schema.createTable(table, (t) => {
        t.bigIncrements('seq').primary()
        tenantColumn(t, tenant)
        t.uuid('actor_id')
        t.string('actor_type', 20)
        t.string('entity_type', 50).notNullable()
        t.string('entity_id', 400).notNullable()
        t.string('operation', 30).notNullable()
        t.string('message', 500).notNullable()
        t.bigInteger('created_at').notNullable()
        t.integer('count')
        t.binary('mac')
      }),
    indexes: (knex, tenant) =>
      knex.schema.alterTable('logs', (t) => {
        t.index([tenant, 'created_at'])
        t.index([tenant, 'entity_type', 'created_at'])
      })
  },
  {
    name: 'log_entities',
    columns: () => ['entity_type', 'entity_id', 'created_at', 'seq'],
    create: (knex, table, tenant) =>
      knex.raw(`CREATE TABLE ${table} (
        ${tenantColumnSql(knex, tenant)},
        entity_type TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        seq ${bigintType(knex)} NOT NULL,
        PRIMARY KEY (${tenant}, entity_type, entity_id, created_at, seq)
      )${withoutRowid(knex)}`),
    indexes: async () => undefined
  },
  counters('log_counts', ['entity_type']),
  counters('log_hour_counts', ['hour', 'entity_type'])
]

/** Rebuilds every table of TABLES with the tenant held as `to` instead of `from`. */
async function rebuild(knex: Knex, from: TenantColumn, to: TenantColumn): Promise<void> {
  for (const table of TABLES) {
    await table.create(knex, `${table.name}_next`, to)
    const [fromTenant, toTenant] = from === 'tenant_id' ? ['id', 'tenant_key'] : ['tenant_key', 'id']
    // A scan of the old table, each row's tenant looked up: the rows keep their order (the tokens' insertion order breaks ties in lists).
    const columns = table.columns(knex)
    await knex.raw(
      `INSERT INTO ${table.name}_next (${to}, ${columns.join(', ')})
       SELECT (SELECT tenants.${toTenant} FROM tenants WHERE tenants.${fromTenant} = old.${from}), ${columns.map((column) => `old.${column}`).join(', ')}
       FROM ${table.name} old`
    )
  }
  for (const table of [...TABLES].reverse()) await knex.schema.dropTable(table.name)
  for (const table of TABLES) {
    await renameRebuilt(knex, `${table.name}_next`, table.name)
    if (table.serial) await continueSequence(knex, table.name, table.serial)
    await table.indexes(knex, to)
  }
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => t.integer('tenant_key'))
  // Numbered in order of creation.
  await knex.raw(`UPDATE tenants SET tenant_key = (
    SELECT count(*) FROM tenants earlier
    WHERE earlier.created_at < tenants.created_at OR (earlier.created_at = tenants.created_at AND earlier.id <= tenants.id))`)
  await knex.schema.alterTable('tenants', (t) => t.unique(['tenant_key']))
  await rebuild(knex, 'tenant_id', 'tenant_key')
}

export async function down(knex: Knex): Promise<void> {
  await rebuild(knex, 'tenant_key', 'tenant_id')
  await knex.schema.alterTable('tenants', (t) => t.dropUnique(['tenant_key']))
  await knex.raw('ALTER TABLE tenants DROP COLUMN tenant_key')
}
