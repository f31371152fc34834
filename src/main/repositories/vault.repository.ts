import type { Db } from '../db/sql'


export interface VaultRow {
  format_version: number
  wrapped_secret_hash_key: Buffer
}

export interface TenantKeyRow {
  tenant_id: string
  purpose: 'data' | 'fingerprint'
  version: number
  wrapped_key: Buffer
}

export async function findVault(db: Db): Promise<VaultRow | undefined> {
  return db('vault').select('format_version', 'wrapped_secret_hash_key').where({ id: 1 }).first()
}

export async function insertVault(db: Db, wrappedSecretHashKey: Uint8Array, now: number): Promise<void> {
  await db('vault').insert({ id: 1, format_version: 1, wrapped_secret_hash_key: Buffer.from(wrappedSecretHashKey), created_at: now })
}

export async function listTenantKeys(db: Db): Promise<TenantKeyRow[]> {
  return db('tenant_keys').select('tenant_id', 'purpose', 'version', 'wrapped_key')
}

export async function insertTenantKey(db: Db, row: TenantKeyRow, now: number): Promise<void> {
  await db('tenant_keys').insert({ ...row, wrapped_key: Buffer.from(row.wrapped_key), created_at: now })
}
