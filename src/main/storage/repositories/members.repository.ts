import type { Knex } from 'knex'
import { sql, type Db } from '../connections'
import { whereEmailMatches } from '../dialect'
import type { MemberRow } from './tenants.repository'


/** A member joined with its user. */
export interface MemberWithUserRow extends MemberRow {
  user_email: string | null
  user_first_name: string | null
  user_last_name: string | null
  user_picture: string | null
}

export interface MemberFilter {
  tenantId: string
  userIds: string[]
}

function withUser(query: Knex.QueryBuilder): Knex.QueryBuilder {
  return query
    .join('users', 'users.id', 'members.user_id')
    .select(
      'members.*',
      'users.email as user_email',
      'users.first_name as user_first_name',
      'users.last_name as user_last_name',
      'users.picture as user_picture'
    )
}

function filtered(db: Db, filter: MemberFilter): Knex.QueryBuilder {
  const query = sql(db)('members').where('members.tenant_id', filter.tenantId)
  if (filter.userIds.length) query.whereIn('members.user_id', filter.userIds)
  return query
}

export async function countMembers(db: Db, filter: MemberFilter): Promise<number> {
  const row = await filtered(db, filter).count({ count: '*' }).first()
  return Number(row?.count ?? 0)
}

/** Newest first, each with its user. */
export async function listMembers(db: Db, filter: MemberFilter, limit: number, offset: number): Promise<MemberWithUserRow[]> {
  return withUser(filtered(db, filter))
    .orderBy([{ column: 'members.created_at', order: 'desc' }, { column: 'members.id', order: 'asc' }])
    .limit(limit)
    .offset(offset)
}

export async function deleteMember(db: Db, tenantId: string, id: string): Promise<number> {
  return sql(db)('members').where({ tenant_id: tenantId, id }).delete()
}

/** The member whose user has this e-mail address, its ASCII letters in any case (`foldedEmail`), if any. */
export async function findMemberByEmail(db: Db, tenantId: string, email: string): Promise<MemberRow | undefined> {
  const query = sql(db)('members').join('users', 'users.id', 'members.user_id').where('members.tenant_id', tenantId)
  return whereEmailMatches(sql(db), query, 'users.email', email).select('members.*').first()
}
