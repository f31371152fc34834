import type { Knex } from 'knex'
import { sql, type Db } from '../connections'


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

/** A session with the expiry of the applications it depends on; null when that application no longer exists. */
export interface SessionCredentialRow extends SessionRow {
  creator_id: string | null
  creator_expires_at: number | null
  authorizer_id: string | null
  authorizer_expires_at: number | null
}

/** What lists and revocation read: everything but the hashes. */
export type SessionSummaryRow = Omit<SessionRow, 'key_hash' | 'nonce_hash'>

const SUMMARY_COLUMNS = ['id', 'tenant_id', 'application_id', 'authorized_by', 'authorized_at', 'permissions', 'rules', 'expires_at', 'created_at']

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await sql(db)('sessions').insert(row)
}

/** The session behind a key hash, with its creating and authorizing applications (left joined: a missing one reads as null). */
export async function findSessionCredential(db: Db, keyHash: string): Promise<SessionCredentialRow | undefined> {
  return sql(db)('sessions')
    .leftJoin('applications as creator', 'creator.id', 'sessions.application_id')
    .leftJoin('applications as authorizer', 'authorizer.id', 'sessions.authorized_by')
    .select(
      'sessions.*',
      'creator.id as creator_id',
      'creator.expires_at as creator_expires_at',
      'authorizer.id as authorizer_id',
      'authorizer.expires_at as authorizer_expires_at'
    )
    .where('sessions.key_hash', keyHash)
    .first()
}

export async function findSessionByNonceHash(db: Db, tenantId: string, nonceHash: string): Promise<SessionRow | undefined> {
  return sql(db)('sessions').where({ tenant_id: tenantId, nonce_hash: nonceHash }).first()
}

export async function findSession(db: Db, tenantId: string, id: string): Promise<SessionSummaryRow | undefined> {
  return sql(db)('sessions').select(SUMMARY_COLUMNS).where({ tenant_id: tenantId, id }).first()
}

/** Authorizes a session unless it already was; returns the number of rows changed (0 or 1). */
export async function authorizeSession(
  db: Db,
  id: string,
  changes: Pick<SessionRow, 'authorized_by' | 'authorized_at' | 'permissions' | 'rules' | 'expires_at'>
): Promise<number> {
  return sql(db)('sessions').where({ id }).whereNull('authorized_at').update(changes)
}

function activeSessions(db: Db, tenantId: string, now: number): Knex.QueryBuilder {
  return sql(db)('sessions').where('tenant_id', tenantId).andWhere('expires_at', '>', now)
}

export async function countActiveSessions(db: Db, tenantId: string, now: number): Promise<number> {
  const row = await activeSessions(db, tenantId, now).count({ count: '*' }).first()
  return Number(row?.count ?? 0)
}

/** Sessions not yet expired at `now`, newest first. */
export async function listActiveSessions(db: Db, tenantId: string, now: number, limit: number, offset: number): Promise<SessionSummaryRow[]> {
  return activeSessions(db, tenantId, now)
    .select(SUMMARY_COLUMNS)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'asc' }])
    .limit(limit)
    .offset(offset)
}

/** Sessions whose `expires_at` has passed, oldest expiry first (for the expiry sweep). */
export async function listExpiredSessions(db: Db, now: number, limit: number): Promise<Pick<SessionRow, 'id' | 'tenant_id'>[]> {
  return sql(db)('sessions').select('id', 'tenant_id').where('expires_at', '<=', now).orderBy('expires_at').limit(limit)
}

/** Sessions an application created or authorized. */
export async function listSessionsOfApplication(db: Db, applicationId: string): Promise<SessionSummaryRow[]> {
  return sql(db)('sessions').select(SUMMARY_COLUMNS).where('application_id', applicationId).orWhere('authorized_by', applicationId)
}

/** Sessions an application authorized. */
export async function listSessionsAuthorizedBy(db: Db, applicationId: string): Promise<SessionSummaryRow[]> {
  return sql(db)('sessions').select(SUMMARY_COLUMNS).where('authorized_by', applicationId)
}

export async function deleteSessions(db: Db, ids: string[]): Promise<number> {
  return ids.length ? sql(db)('sessions').whereIn('id', ids).delete() : 0
}
