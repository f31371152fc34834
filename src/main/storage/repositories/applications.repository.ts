import type { Knex } from 'knex'
import { sql, type Db } from '../connections'
import { notExpiredAt } from '../sql'


/** An application row; `permissions` and `rules` are JSON text. */
export interface ApplicationRow {
  id: string
  tenant_id: string
  name: string
  type: string
  permissions: string
  rules: string
  key_hash: string
  expires_at: number | null
  created_by: string | null
  created_at: number
  modified_by: string | null
  modified_at: number | null
}

export async function insertApplication(db: Db, row: ApplicationRow): Promise<void> {
  await sql(db)('applications').insert(row)
}

export async function findApplicationByKeyHash(db: Db, keyHash: string): Promise<ApplicationRow | undefined> {
  return sql(db)('applications').where({ key_hash: keyHash }).first()
}

export async function findApplication(db: Db, tenantId: string, id: string): Promise<ApplicationRow | undefined> {
  return sql(db)('applications').where({ tenant_id: tenantId, id }).first()
}

export interface ApplicationFilter {
  tenantId: string
  ids: string[]
  types: string[]
  /** When set, leaves out applications whose `expires_at` is at or before this time. */
  activeAt?: number
}

function filtered(db: Db, filter: ApplicationFilter): Knex.QueryBuilder {
  const query = sql(db)('applications').where('tenant_id', filter.tenantId)
  if (filter.ids.length) query.whereIn('id', filter.ids)
  if (filter.types.length) query.whereIn('type', filter.types)
  const activeAt = filter.activeAt
  if (activeAt !== undefined) query.andWhere(notExpiredAt(activeAt))
  return query
}

export async function countApplications(db: Db, filter: ApplicationFilter): Promise<number> {
  const row = await filtered(db, filter).count({ count: '*' }).first()
  return Number(row?.count ?? 0)
}

/** Newest first. */
export async function listApplications(db: Db, filter: ApplicationFilter, limit: number, offset: number): Promise<ApplicationRow[]> {
  return filtered(db, filter).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'asc' }]).limit(limit).offset(offset)
}

export async function updateApplication(db: Db, tenantId: string, id: string, changes: Partial<ApplicationRow>): Promise<number> {
  return sql(db)('applications').where({ tenant_id: tenantId, id }).update(changes)
}

export async function deleteApplication(db: Db, tenantId: string, id: string): Promise<number> {
  return sql(db)('applications').where({ tenant_id: tenantId, id }).delete()
}

/** Applications whose `expires_at` has passed (for the expiry sweep). */
export async function listExpiredApplications(db: Db, now: number, limit: number): Promise<ApplicationRow[]> {
  return sql(db)('applications').where('expires_at', '<=', now).limit(limit)
}
