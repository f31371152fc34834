/**
 * Every table holding data sealed with a tenant's data key, seen alike by key
 * rotation: how many rows each key version seals, and re-sealing rows one by one.
 * The sealed bytes pass through untouched; the services open and seal them.
 */
import type { SealedObjectKind } from '../../../shared/types'
import { sql, type Db } from '../connections'
import { tenantKeys } from '../tenant-keys'

export const SEALED_KINDS: readonly SealedObjectKind[] = ['tokens', 'outbox_mails', 'sealed_settings', 'token_intents', 'idempotent_responses']

const TABLES: Record<SealedObjectKind, { table: string; id: string; sealed: string; byTenantKey?: true }> = {
  tokens: { table: 'tokens', id: 'id', sealed: 'sealed_data', byTenantKey: true },
  outbox_mails: { table: 'mail_outbox', id: 'id', sealed: 'sealed_body' },
  sealed_settings: { table: 'sealed_settings', id: 'name', sealed: 'sealed_value' },
  token_intents: { table: 'token_intents', id: 'id', sealed: 'sealed_data' },
  // A key still held by a running request has no response yet: only completed rows count.
  idempotent_responses: { table: 'idempotency_keys', id: 'reservation', sealed: 'sealed_response' }
}

/** The condition on a table's tenant: its key where the table holds keys (storage/tenant-keys.ts), else its id. */
function ofTenant(db: Db, kind: SealedObjectKind, tenantId: string): Record<string, string | number> {
  return TABLES[kind].byTenantKey ? { tenant_key: tenantKeys(db).keyOf(tenantId) } : { tenant_id: tenantId }
}

/** One sealed row: its id within the tenant (token id, mail id, setting name, intent id), version and bytes. */
export interface SealedObject {
  id: string
  key_version: number
  sealed: Buffer
}

/** `key_version → rows` of one kind for a tenant. */
export async function countSealedByVersion(db: Db, kind: SealedObjectKind, tenantId: string): Promise<Map<number, number>> {
  const rows: { key_version: number | string; count: number | string }[] = await sql(db)(TABLES[kind].table)
    .where(ofTenant(db, kind, tenantId))
    .whereNotNull(TABLES[kind].sealed)
    .select('key_version')
    .count({ count: '*' })
    .groupBy('key_version')
  return new Map(rows.map((row) => [Number(row.key_version), Number(row.count)]))
}

/** Up to `limit` rows of one kind sealed under another version than `version`. */
export async function listSealedOffVersion(db: Db, kind: SealedObjectKind, tenantId: string, version: number, limit: number): Promise<SealedObject[]> {
  const { table, id, sealed } = TABLES[kind]
  return sql(db)(table)
    .select({ id, key_version: 'key_version', sealed })
    .where(ofTenant(db, kind, tenantId))
    .whereNotNull(sealed)
    .andWhereNot('key_version', version)
    .limit(limit)
}

/**
 * Replaces a row's sealed bytes and version, only if it still holds the bytes `object` was read with:
 * a concurrent change wins, even one sealed under the same old version (on a team vault, another
 * instance that has not heard of the rotation yet), which the version alone would not show.
 */
export async function resealObject(db: Db, kind: SealedObjectKind, tenantId: string, object: SealedObject, sealed: Uint8Array, version: number): Promise<number> {
  const table = TABLES[kind]
  return sql(db)(table.table)
    .where({ ...ofTenant(db, kind, tenantId), [table.id]: object.id, key_version: object.key_version, [table.sealed]: object.sealed })
    .update({ [table.sealed]: Buffer.from(sealed), key_version: version })
}
