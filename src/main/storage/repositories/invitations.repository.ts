import type { Knex } from 'knex'
import { sql, type Db, type Tx } from '../connections'
import { whereEmailMatches } from '../dialect'
import { isUniqueViolation } from '../sql'


export type PersistedInvitationStatus = 'PENDING' | 'EXPIRED'

/** An invitation row; `link_hash` is the keyed hash of the current link's secret. */
export interface InvitationRow {
  id: string
  tenant_id: string
  email: string
  status: PersistedInvitationStatus
  link_hash: string | null
  expires_at: number
  created_by: string | null
  created_at: number
  modified_by: string | null
  modified_at: number | null
}

export interface InvitationFilter {
  tenantId: string
  /** Status as derived from `expires_at` at `now`. */
  status?: PersistedInvitationStatus
  now: number
}

/** Inserts an invitation; one for the same e-mail address in the tenant (held by a unique index) fails with `onDuplicateEmail()`. */
export async function insertInvitation(db: Db, row: InvitationRow, onDuplicateEmail: () => Error): Promise<void> {
  try {
    await sql(db)('invitations').insert(row)
  } catch (error) {
    throw isUniqueViolation(error) ? onDuplicateEmail() : error
  }
}

export async function findInvitation(db: Db, tenantId: string, id: string): Promise<InvitationRow | undefined> {
  return sql(db)('invitations').where({ tenant_id: tenantId, id }).first()
}

export async function findInvitationByLinkHash(db: Db, linkHash: string): Promise<InvitationRow | undefined> {
  return sql(db)('invitations').where({ link_hash: linkHash }).first()
}

/** The tenant's invitation for this e-mail address, its ASCII letters in any case (`foldedEmail`): one search of the unique index. */
export async function findInvitationByEmail(db: Db, tenantId: string, email: string): Promise<InvitationRow | undefined> {
  return whereEmailMatches(sql(db), sql(db)('invitations').where({ tenant_id: tenantId }), 'email', email).first()
}

function filtered(db: Db, filter: InvitationFilter): Knex.QueryBuilder {
  const query = sql(db)('invitations').where('tenant_id', filter.tenantId)
  if (filter.status === 'EXPIRED') query.andWhere('expires_at', '<=', filter.now)
  if (filter.status === 'PENDING') query.andWhere('expires_at', '>', filter.now)
  return query
}

export async function countInvitations(db: Db, filter: InvitationFilter): Promise<number> {
  const row = await filtered(db, filter).count({ count: '*' }).first()
  return Number(row?.count ?? 0)
}

/** Newest first. */
export async function listInvitations(db: Db, filter: InvitationFilter, limit: number, offset: number): Promise<InvitationRow[]> {
  return filtered(db, filter)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'asc' }])
    .limit(limit)
    .offset(offset)
}

export async function updateInvitation(db: Db, tenantId: string, id: string, changes: Partial<InvitationRow>): Promise<number> {
  return sql(db)('invitations').where({ tenant_id: tenantId, id }).update(changes)
}

export async function deleteInvitation(db: Db, tenantId: string, id: string): Promise<number> {
  return sql(db)('invitations').where({ tenant_id: tenantId, id }).delete()
}

/**
 * Marks up to `limit` pending invitations past `expires_at` EXPIRED (the expiry sweep) and returns
 * those this statement changed: not one another instance marked first, resent or deleted meanwhile.
 */
export async function markExpiredInvitations(tx: Tx, now: number, limit: number): Promise<Pick<InvitationRow, 'id' | 'tenant_id'>[]> {
  const due = sql(tx)('invitations').select('id').where('status', 'PENDING').andWhere('expires_at', '<=', now).limit(limit)
  return sql(tx)('invitations')
    .whereIn('id', due)
    .andWhere('status', 'PENDING')
    .andWhere('expires_at', '<=', now)
    .update({ status: 'EXPIRED' })
    .returning(['id', 'tenant_id'])
}
