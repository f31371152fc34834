import { sql, type Db } from '../connections'

/** One of an application's keys, stored only as a keyed hash. */
export interface ApplicationKeyRecord {
  id: string
  tenant_id: string
  application_id: string
  key_hash: string
  created_by: string | null
  created_at: number
}

/** A key as it is shown: everything but its hash. */
export type ApplicationKeySummary = Omit<ApplicationKeyRecord, 'key_hash'>

const SUMMARY_COLUMNS = ['id', 'tenant_id', 'application_id', 'created_by', 'created_at']

export async function insertApplicationKey(db: Db, key: ApplicationKeyRecord): Promise<void> {
  await sql(db)('application_keys').insert(key)
}

/** The keys of these applications, oldest first. */
export async function listKeysOfApplications(db: Db, tenantId: string, applicationIds: string[]): Promise<ApplicationKeySummary[]> {
  if (!applicationIds.length) return []
  return sql(db)('application_keys')
    .select(SUMMARY_COLUMNS)
    .where('tenant_id', tenantId)
    .whereIn('application_id', applicationIds)
    .orderBy([{ column: 'created_at', order: 'asc' }, { column: 'id', order: 'asc' }])
}

export async function findApplicationKey(db: Db, tenantId: string, applicationId: string, id: string): Promise<ApplicationKeySummary | undefined> {
  return sql(db)('application_keys').select(SUMMARY_COLUMNS).where({ tenant_id: tenantId, application_id: applicationId, id }).first()
}

export async function deleteApplicationKey(db: Db, tenantId: string, applicationId: string, id: string): Promise<number> {
  return sql(db)('application_keys').where({ tenant_id: tenantId, application_id: applicationId, id }).delete()
}

/** Deletes every key of the application but `keepId`. */
export async function deleteOtherApplicationKeys(db: Db, tenantId: string, applicationId: string, keepId: string): Promise<number> {
  return sql(db)('application_keys').where({ tenant_id: tenantId, application_id: applicationId }).whereNot('id', keepId).delete()
}
