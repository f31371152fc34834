import type { Db } from '../db/sql'


export interface VaultRow {
  format_version: number
  wrapped_secret_hash_key: Buffer
  /** Null in a vault created before the audit chain, until it is first opened. */
  wrapped_audit_mac_key: Buffer | null
  wrapped_audit_signing_key: Buffer | null
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
}

export async function findVault(db: Db): Promise<VaultRow | undefined> {
  return db('vault').select('format_version', 'wrapped_secret_hash_key', 'wrapped_audit_mac_key', 'wrapped_audit_signing_key').where({ id: 1 }).first()
}

export async function insertVault(db: Db, wrappedSecretHashKey: Uint8Array, now: number): Promise<void> {
  await db('vault').insert({ id: 1, format_version: 1, wrapped_secret_hash_key: Buffer.from(wrappedSecretHashKey), created_at: now })
}

export async function updateAuditKeys(db: Db, keys: WrappedAuditKeys): Promise<void> {
  await db('vault')
    .update({ wrapped_audit_mac_key: Buffer.from(keys.wrapped_audit_mac_key), wrapped_audit_signing_key: Buffer.from(keys.wrapped_audit_signing_key) })
    .where({ id: 1 })
}

export async function listTenantKeys(db: Db): Promise<TenantKeyRow[]> {
  return db('tenant_keys').select('tenant_id', 'purpose', 'version', 'wrapped_key')
}

export async function insertTenantKey(db: Db, row: TenantKeyRow, now: number): Promise<void> {
  await db('tenant_keys').insert({ ...row, wrapped_key: Buffer.from(row.wrapped_key), created_at: now })
}

/** A no-op write that takes SQLite's write lock at once (a deferred transaction would take it only at its first write). */
export async function lockVaultRow(trx: Db): Promise<void> {
  await trx('vault').update({ format_version: trx.ref('format_version') }).where({ id: 1 })
}
