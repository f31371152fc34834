import type { Knex } from 'knex'
import type { AccessRule, ApplicationType, Permission } from '../../../shared/types'
import { sql, type Db, type Tx } from '../connections'
import { notExpiredAt } from '../sql'
import { deleteReturning } from '../dialect'

/** An application; its keys are in application_keys (see application-keys.repository). */
export interface ApplicationRecord {
  id: string
  tenant_id: string
  name: string
  type: ApplicationType
  permissions: Permission[]
  rules: AccessRule[]
  expires_at: number | null
  created_by: string | null
  created_at: number
  modified_by: string | null
  modified_at: number | null
}

/** The columns of (some of) an application's fields: the grant is JSON text. */
function toColumns({ permissions, rules, ...plain }: Partial<ApplicationRecord>): Record<string, unknown> {
  return {
    ...plain,
    ...(permissions !== undefined ? { permissions: JSON.stringify(permissions) } : {}),
    ...(rules !== undefined ? { rules: JSON.stringify(rules) } : {})
  }
}

type ApplicationRow = Omit<ApplicationRecord, 'permissions' | 'rules'> & { permissions: string; rules: string }

function fromRow(row: ApplicationRow): ApplicationRecord {
  return { ...row, permissions: JSON.parse(row.permissions), rules: JSON.parse(row.rules) }
}

const toRecord = (row: ApplicationRow | undefined) => (row ? fromRow(row) : undefined)

export async function insertApplication(db: Db, application: ApplicationRecord): Promise<void> {
  await sql(db)('applications').insert(toColumns(application))
}

/** An application and the id of one of its keys. */
export type ApplicationWithKey = ApplicationRecord & { key_id: string }

/** The application one of whose keys has this hash, with that key's id. */
export async function findApplicationByKeyHash(db: Db, keyHash: string): Promise<ApplicationWithKey | undefined> {
  const row = await sql(db)('applications')
    .select('applications.*', 'application_keys.id as key_id')
    .join('application_keys', 'application_keys.application_id', 'applications.id')
    .where('application_keys.key_hash', keyHash)
    .first()
  return toRecord(row) as ApplicationWithKey | undefined
}

/** The application, if `keyId` is still one of its keys (in one query: read in a write transaction, it is a round trip under the writers' lock). */
export async function findApplicationHoldingKey(db: Db, tenantId: string, id: string, keyId: string): Promise<ApplicationRecord | undefined> {
  const row = await sql(db)('applications')
    .select('applications.*')
    .join('application_keys', 'application_keys.application_id', 'applications.id')
    .where({ 'applications.tenant_id': tenantId, 'applications.id': id, 'application_keys.id': keyId })
    .first()
  return toRecord(row)
}

export async function findApplication(db: Db, tenantId: string, id: string): Promise<ApplicationRecord | undefined> {
  return toRecord(await sql(db)('applications').where({ tenant_id: tenantId, id }).first())
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
export async function listApplications(db: Db, filter: ApplicationFilter, limit: number, offset: number): Promise<ApplicationRecord[]> {
  const rows = await filtered(db, filter).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'asc' }]).limit(limit).offset(offset)
  return rows.map(fromRow)
}

export async function updateApplication(db: Db, tenantId: string, id: string, changes: Partial<ApplicationRecord>): Promise<number> {
  return sql(db)('applications').where({ tenant_id: tenantId, id }).update(toColumns(changes))
}

export async function deleteApplication(db: Db, tenantId: string, id: string): Promise<number> {
  return sql(db)('applications').where({ tenant_id: tenantId, id }).delete()
}

/**
 * Deletes up to `limit` applications whose `expires_at` has passed (the expiry sweep) and
 * returns those this statement deleted: not one another instance deleted first or extended meanwhile.
 */
export async function deleteExpiredApplications(tx: Tx, now: number, limit: number): Promise<Pick<ApplicationRecord, 'id' | 'tenant_id'>[]> {
  const due = sql(tx)('applications').select('id').where('expires_at', '<=', now).limit(limit)
  return deleteReturning(sql(tx), sql(tx)('applications').whereIn('id', due).andWhere('expires_at', '<=', now), ['id', 'tenant_id'])
}
