import type { KeyRetirementReport, SealedCountsByVersion } from '../../../shared/types'
import { sql, type Db } from '../connections'
import { lockUntilCommit, VAULT_CREATION_LOCK } from '../dialect'

export interface VaultRow {
  format_version: number
  wrapped_secret_hash_key: Buffer
  /** The same key wrapped under a new master key, between the two commits of a master rotation. */
  wrapped_secret_hash_key_next: Buffer | null
  /** Null in a vault created before the audit chain, until it is first opened. */
  wrapped_audit_mac_key: Buffer | null
  wrapped_audit_signing_key: Buffer | null
  wrapped_audit_mac_key_next: Buffer | null
  wrapped_audit_signing_key_next: Buffer | null
}

export interface WrappedAuditKeys {
  wrapped_audit_mac_key: Uint8Array
  wrapped_audit_signing_key: Uint8Array
}

export interface TenantKeyRow {
  tenant_id: string
  purpose: 'data' | 'fingerprint'
  version: number
  wrapped_key: Buffer
  /** The same key wrapped under a new master key, between the two commits of a master rotation. */
  wrapped_key_next?: Buffer | null
  created_at?: number
}

/**
 * Makes concurrent vault creations in one database take turns, until the end
 * of the transaction `db` (PostgreSQL's advisory lock; SQLite's writer is one).
 */
export async function awaitVaultCreationTurn(db: Db): Promise<void> {
  await lockUntilCommit(sql(db), VAULT_CREATION_LOCK)
}

export async function findVault(db: Db): Promise<VaultRow | undefined> {
  return sql(db)('vault')
    .select(
      'format_version',
      'wrapped_secret_hash_key',
      'wrapped_secret_hash_key_next',
      'wrapped_audit_mac_key',
      'wrapped_audit_signing_key',
      'wrapped_audit_mac_key_next',
      'wrapped_audit_signing_key_next'
    )
    .where({ id: 1 })
    .first()
}

export async function insertVault(db: Db, wrappedSecretHashKey: Uint8Array, now: number): Promise<void> {
  await sql(db)('vault').insert({ id: 1, format_version: 1, wrapped_secret_hash_key: Buffer.from(wrappedSecretHashKey), created_at: now })
}

export async function updateAuditKeys(db: Db, keys: WrappedAuditKeys): Promise<void> {
  await sql(db)('vault')
    .update({ wrapped_audit_mac_key: Buffer.from(keys.wrapped_audit_mac_key), wrapped_audit_signing_key: Buffer.from(keys.wrapped_audit_signing_key) })
    .where({ id: 1 })
}

export async function listTenantKeys(db: Db): Promise<TenantKeyRow[]> {
  return sql(db)('tenant_keys').select('tenant_id', 'purpose', 'version', 'wrapped_key', 'wrapped_key_next', 'created_at')
}

export async function insertTenantKey(db: Db, row: TenantKeyRow, now: number): Promise<void> {
  await sql(db)('tenant_keys').insert({ ...row, wrapped_key: Buffer.from(row.wrapped_key), created_at: now })
}

/** Deletes a data key: whatever it sealed can never be opened again (crypto-shredding). */
export async function deleteDataKey(db: Db, tenantId: string, version: number): Promise<number> {
  return sql(db)('tenant_keys').where({ tenant_id: tenantId, purpose: 'data', version }).delete()
}

/** Stages every key wrapped under a new master key, beside the current wrapping. */
export async function stageWrappings(
  db: Db,
  vaultKeys: { secretHashKey: Uint8Array; audit?: WrappedAuditKeys },
  tenantKeys: Array<Pick<TenantKeyRow, 'tenant_id' | 'purpose' | 'version'> & { wrapped: Uint8Array }>
): Promise<void> {
  const audit = vaultKeys.audit && {
    wrapped_audit_mac_key_next: Buffer.from(vaultKeys.audit.wrapped_audit_mac_key),
    wrapped_audit_signing_key_next: Buffer.from(vaultKeys.audit.wrapped_audit_signing_key)
  }
  await sql(db)('vault')
    .where({ id: 1 })
    .update({ wrapped_secret_hash_key_next: Buffer.from(vaultKeys.secretHashKey), ...audit })
  for (const { tenant_id, purpose, version, wrapped } of tenantKeys) {
    await sql(db)('tenant_keys').where({ tenant_id, purpose, version }).update({ wrapped_key_next: Buffer.from(wrapped) })
  }
}

/** Makes the staged wrappings the current ones (the new master key is stored by now). */
export async function promoteStagedWrappings(db: Db): Promise<void> {
  await sql(db)('vault').whereNotNull('wrapped_secret_hash_key_next').update({ wrapped_secret_hash_key: sql(db).ref('wrapped_secret_hash_key_next'), wrapped_secret_hash_key_next: null })
  await sql(db)('vault')
    .whereNotNull('wrapped_audit_mac_key_next')
    .update({
      wrapped_audit_mac_key: sql(db).ref('wrapped_audit_mac_key_next'),
      wrapped_audit_signing_key: sql(db).ref('wrapped_audit_signing_key_next'),
      wrapped_audit_mac_key_next: null,
      wrapped_audit_signing_key_next: null
    })
  await sql(db)('tenant_keys').whereNotNull('wrapped_key_next').update({ wrapped_key: sql(db).ref('wrapped_key_next'), wrapped_key_next: null })
}

/** Drops staged wrappings of a master rotation that never stored its key. */
export async function discardStagedWrappings(db: Db): Promise<void> {
  await sql(db)('vault').update({ wrapped_secret_hash_key_next: null, wrapped_audit_mac_key_next: null, wrapped_audit_signing_key_next: null })
  await sql(db)('tenant_keys').update({ wrapped_key_next: null })
}

/** The highest data-key version a tenant ever had, retired ones included (versions are never reused). */
export async function lastDataKeyVersion(db: Db, tenantId: string): Promise<number> {
  const [active] = await sql(db)('tenant_keys').where({ tenant_id: tenantId, purpose: 'data' }).max({ last: 'version' })
  const [retired] = await sql(db)('retired_data_keys').where({ tenant_id: tenantId }).max({ last: 'version' })
  return Math.max(Number(active?.last ?? 0), Number(retired?.last ?? 0))
}

export interface RetiredDataKeyRecord {
  tenant_id: string
  version: number
  key_check_value: string
  created_at: number
  retired_at: number
  /** The retirement report. */
  report: KeyRetirementReport
}

export async function insertRetiredDataKey(db: Db, retired: RetiredDataKeyRecord): Promise<void> {
  await sql(db)('retired_data_keys').insert({ ...retired, report: JSON.stringify(retired.report) })
}

export async function listRetiredDataKeys(db: Db, tenantId: string): Promise<RetiredDataKeyRecord[]> {
  const rows = await sql(db)('retired_data_keys').where({ tenant_id: tenantId }).orderBy('version')
  return rows.map((row: Omit<RetiredDataKeyRecord, 'report'> & { report: string }) => ({ ...row, version: Number(row.version), report: JSON.parse(row.report) }))
}

export interface KeyRotationRecord {
  id: number
  tenant_id: string
  target_version: number
  /** Objects per kind and version when the rotation started. */
  counts_before: SealedCountsByVersion
  started_at: number
  finished_at: number | null
}

type KeyRotationRow = Omit<KeyRotationRecord, 'counts_before'> & { counts_before: string }

function fromRotationRow(row: KeyRotationRow): KeyRotationRecord {
  return { ...row, target_version: Number(row.target_version), counts_before: JSON.parse(row.counts_before) }
}

export async function insertKeyRotation(db: Db, rotation: Omit<KeyRotationRecord, 'id' | 'finished_at'>): Promise<void> {
  await sql(db)('key_rotations').insert({ ...rotation, counts_before: JSON.stringify(rotation.counts_before) })
}

/** Rotations whose re-encryption pass has not finished, oldest first. */
export async function listUnfinishedRotations(db: Db): Promise<KeyRotationRecord[]> {
  return (await sql(db)('key_rotations').whereNull('finished_at').orderBy('id')).map(fromRotationRow)
}

/** The first rotation of a tenant onto a version after `version`: the one that moved objects off it. */
export async function firstRotationAfter(db: Db, tenantId: string, version: number): Promise<KeyRotationRecord | undefined> {
  const row = await sql(db)('key_rotations').where({ tenant_id: tenantId }).andWhere('target_version', '>', version).orderBy('id').first()
  return row && fromRotationRow(row)
}

export async function latestRotation(db: Db, tenantId: string): Promise<KeyRotationRecord | undefined> {
  const row = await sql(db)('key_rotations').where({ tenant_id: tenantId }).orderBy('id', 'desc').first()
  return row && fromRotationRow(row)
}

export async function finishKeyRotation(db: Db, id: number, at: number): Promise<void> {
  await sql(db)('key_rotations').where({ id }).update({ finished_at: at })
}

/** A no-op write that takes SQLite's write lock at once (a deferred transaction would take it only at its first write). */
export async function lockVaultRow(trx: Db): Promise<void> {
  await sql(trx)('vault').update({ format_version: sql(trx).ref('format_version') }).where({ id: 1 })
}
