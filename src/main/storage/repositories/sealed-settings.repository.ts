import { sql, type Db } from '../connections'

/** A secret of the settings (the SMTP password), sealed with the tenant's data key. */
export interface SealedSettingRow {
  tenant_id: string
  name: string
  key_version: number
  sealed_value: Buffer
  modified_at: number
}

export async function findSealedSetting(db: Db, tenantId: string, name: string): Promise<SealedSettingRow | undefined> {
  return sql(db)('sealed_settings').where({ tenant_id: tenantId, name }).first()
}

export async function upsertSealedSetting(db: Db, row: SealedSettingRow): Promise<void> {
  await sql(db)('sealed_settings').insert(row).onConflict(['tenant_id', 'name']).merge()
}

export async function deleteSealedSetting(db: Db, tenantId: string, name: string): Promise<void> {
  await sql(db)('sealed_settings').where({ tenant_id: tenantId, name }).delete()
}

/** Stores `row` unless the setting exists; false when it did (another instance stored it first). */
export async function insertSealedSettingIfAbsent(db: Db, row: SealedSettingRow): Promise<boolean> {
  const inserted = await sql(db)('sealed_settings').insert(row).onConflict(['tenant_id', 'name']).ignore().returning('name')
  return inserted.length > 0
}
