import { sql, type Db } from '../connections'
import { whereEmailMatches } from '../dialect'
import { tenantKeys } from '../tenant-keys'


export interface TenantRow {
  id: string
  name: string
  owner_user_id: string | null
  created_at: number
  modified_at?: number | null
}

export interface UserRow {
  id: string
  email: string | null
  first_name: string | null
  last_name: string | null
  picture: string | null
  created_at: number
}

export interface MemberRow {
  id: string
  tenant_id: string
  user_id: string
  role: 'OWNER' | 'ADMIN'
  created_by: string | null
  created_at: number
  modified_by: string | null
  modified_at: number | null
}

/** Adds a tenant with the next tenant key (storage/tenant-keys.ts); tenants are created one at a time. */
export async function insertTenant(db: Db, row: TenantRow): Promise<void> {
  const [{ last }] = await sql(db)('tenants').max({ last: 'tenant_key' })
  const key = Number(last ?? 0) + 1
  await sql(db)('tenants').insert({ ...row, tenant_key: key })
  tenantKeys(db).add(row.id, key)
}

export async function listTenants(db: Db): Promise<TenantRow[]> {
  return sql(db)('tenants').select('id', 'name', 'owner_user_id', 'created_at').orderBy('created_at')
}

export async function insertUser(db: Db, row: UserRow): Promise<void> {
  await sql(db)('users').insert(row)
}

/** The user with this e-mail address, its ASCII letters in any case (`foldedEmail`). */
export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return whereEmailMatches(sql(db), sql(db)('users'), 'email', email).first()
}

export async function insertMember(db: Db, row: MemberRow): Promise<void> {
  await sql(db)('members').insert(row)
}

export async function findMember(db: Db, tenantId: string, id: string): Promise<MemberRow | undefined> {
  return sql(db)('members').where({ tenant_id: tenantId, id }).first()
}

export async function findMemberByUser(db: Db, tenantId: string, userId: string): Promise<MemberRow | undefined> {
  return sql(db)('members').where({ tenant_id: tenantId, user_id: userId }).first()
}

export async function findTenant(db: Db, id: string): Promise<TenantRow | undefined> {
  return sql(db)('tenants').select('id', 'name', 'owner_user_id', 'created_at', 'modified_at').where({ id }).first()
}

export async function renameTenant(db: Db, id: string, name: string, modifiedAt: number): Promise<number> {
  return sql(db)('tenants').where({ id }).update({ name, modified_at: modifiedAt })
}

export async function updateUser(db: Db, id: string, changes: Partial<Omit<UserRow, 'id'>>): Promise<number> {
  return sql(db)('users').where({ id }).update(changes)
}
