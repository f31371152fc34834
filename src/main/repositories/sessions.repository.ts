import type { Db } from '../db/sql'


/** A session row; `permissions` and `rules` are JSON text, empty until authorized. */
export interface SessionRow {
  id: string
  tenant_id: string
  application_id: string
  key_hash: string
  nonce_hash: string
  authorized_by: string | null
  authorized_at: number | null
  permissions: string
  rules: string
  expires_at: number
  created_at: number
}

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db('sessions').insert(row)
}

export async function findSessionByKeyHash(db: Db, keyHash: string): Promise<SessionRow | undefined> {
  return db('sessions').where({ key_hash: keyHash }).first()
}

export async function findSessionByNonceHash(db: Db, tenantId: string, nonceHash: string): Promise<SessionRow | undefined> {
  return db('sessions').where({ tenant_id: tenantId, nonce_hash: nonceHash }).first()
}

/** Authorizes a session unless it already was; returns the number of rows changed (0 or 1). */
export async function authorizeSession(
  db: Db,
  id: string,
  changes: Pick<SessionRow, 'authorized_by' | 'authorized_at' | 'permissions' | 'rules' | 'expires_at'>
): Promise<number> {
  return db('sessions').where({ id }).whereNull('authorized_at').update(changes)
}

/** Sessions whose `expires_at` has passed, oldest expiry first (for the expiry sweep). */
export async function listExpiredSessions(db: Db, now: number, limit: number): Promise<Pick<SessionRow, 'id' | 'tenant_id'>[]> {
  return db('sessions').select('id', 'tenant_id').where('expires_at', '<=', now).orderBy('expires_at').limit(limit)
}

export async function deleteSessions(db: Db, ids: string[]): Promise<number> {
  return ids.length ? db('sessions').whereIn('id', ids).delete() : 0
}

/** Deletes the sessions an application created or authorized; returns their ids. */
export async function deleteSessionsOfApplication(db: Db, applicationId: string): Promise<string[]> {
  const ids: string[] = (
    await db('sessions').select('id').where('application_id', applicationId).orWhere('authorized_by', applicationId)
  ).map((row: { id: string }) => row.id)
  await deleteSessions(db, ids)
  return ids
}
