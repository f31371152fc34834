import type { Knex } from 'knex'
import type { AccessRule, Permission } from '../../../shared/types'
import { sql, type Db, type Tx } from '../connections'
import { deleteReturning } from '../dialect'

/** A session; its key and nonce are stored only as keyed hashes, its grant is empty until authorized. */
export interface SessionRecord {
  id: string
  tenant_id: string
  application_id: string
  key_hash: string
  nonce_hash: string
  authorized_by: string | null
  authorized_at: number | null
  permissions: Permission[]
  rules: AccessRule[]
  expires_at: number
  created_at: number
}

/** The grant's columns hold JSON text. */
function toColumns<T extends Partial<SessionRecord>>({ permissions, rules, ...plain }: T): Record<string, unknown> {
  return {
    ...plain,
    ...(permissions !== undefined ? { permissions: JSON.stringify(permissions) } : {}),
    ...(rules !== undefined ? { rules: JSON.stringify(rules) } : {})
  }
}

type Row = { permissions: string; rules: string }

/** A row with its grant parsed. */
function fromRow<T extends Partial<SessionRecord>>(row: Row): T {
  return { ...row, permissions: JSON.parse(row.permissions), rules: JSON.parse(row.rules) } as unknown as T
}

function fromRowIfAny<T extends Partial<SessionRecord>>(row: Row | undefined): T | undefined {
  return row ? fromRow<T>(row) : undefined
}

/** A session with the expiry of the applications it depends on; null when that application no longer exists. */
export interface SessionCredential extends SessionRecord {
  creator_id: string | null
  creator_expires_at: number | null
  authorizer_id: string | null
  authorizer_expires_at: number | null
}

/** What lists and revocation read: everything but the hashes. */
export type SessionSummary = Omit<SessionRecord, 'key_hash' | 'nonce_hash'>

const SUMMARY_COLUMNS = ['id', 'tenant_id', 'application_id', 'authorized_by', 'authorized_at', 'permissions', 'rules', 'expires_at', 'created_at']

export async function insertSession(db: Db, session: SessionRecord): Promise<void> {
  await sql(db)('sessions').insert(toColumns(session))
}

/** The session behind a key hash, with its creating and authorizing applications (left joined: a missing one reads as null). */
export async function findSessionCredential(db: Db, keyHash: string): Promise<SessionCredential | undefined> {
  const row = await sql(db)('sessions')
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
  return fromRowIfAny<SessionCredential>(row)
}

export async function findSessionByNonceHash(db: Db, tenantId: string, nonceHash: string): Promise<SessionRecord | undefined> {
  return fromRowIfAny<SessionRecord>(await sql(db)('sessions').where({ tenant_id: tenantId, nonce_hash: nonceHash }).first())
}

export async function findSession(db: Db, tenantId: string, id: string): Promise<SessionSummary | undefined> {
  return fromRowIfAny<SessionSummary>(await sql(db)('sessions').select(SUMMARY_COLUMNS).where({ tenant_id: tenantId, id }).first())
}

/** Authorizes a session unless it already was; returns the number of rows changed (0 or 1). */
export async function authorizeSession(
  db: Db,
  id: string,
  changes: Pick<SessionRecord, 'authorized_by' | 'authorized_at' | 'permissions' | 'rules' | 'expires_at'>
): Promise<number> {
  return sql(db)('sessions').where({ id }).whereNull('authorized_at').update(toColumns(changes))
}

function activeSessions(db: Db, tenantId: string, now: number): Knex.QueryBuilder {
  return sql(db)('sessions').where('tenant_id', tenantId).andWhere('expires_at', '>', now)
}

export async function countActiveSessions(db: Db, tenantId: string, now: number): Promise<number> {
  const row = await activeSessions(db, tenantId, now).count({ count: '*' }).first()
  return Number(row?.count ?? 0)
}

/** Sessions not yet expired at `now`, newest first. */
export async function listActiveSessions(db: Db, tenantId: string, now: number, limit: number, offset: number): Promise<SessionSummary[]> {
  const rows = await activeSessions(db, tenantId, now)
    .select(SUMMARY_COLUMNS)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'asc' }])
    .limit(limit)
    .offset(offset)
  return rows.map((row: Row) => fromRow<SessionSummary>(row))
}

/**
 * Deletes up to `limit` sessions whose `expires_at` has passed, oldest expiry first (the
 * expiry sweep), and returns those this statement deleted: a session another instance
 * deleted first, or whose expiry moved meanwhile, is not among them.
 */
export async function deleteExpiredSessions(tx: Tx, now: number, limit: number): Promise<Pick<SessionRecord, 'id' | 'tenant_id'>[]> {
  const due = sql(tx)('sessions').select('id').where('expires_at', '<=', now).orderBy('expires_at').limit(limit)
  return deleteReturning(sql(tx), sql(tx)('sessions').whereIn('id', due).andWhere('expires_at', '<=', now), ['id', 'tenant_id'])
}

/** Sessions an application created or authorized. */
export async function listSessionsOfApplication(db: Db, applicationId: string): Promise<SessionSummary[]> {
  return (await sql(db)('sessions').select(SUMMARY_COLUMNS).where('application_id', applicationId).orWhere('authorized_by', applicationId)).map((row) => fromRow<SessionSummary>(row))
}

/** Sessions an application authorized. */
export async function listSessionsAuthorizedBy(db: Db, applicationId: string): Promise<SessionSummary[]> {
  return (await sql(db)('sessions').select(SUMMARY_COLUMNS).where('authorized_by', applicationId)).map((row) => fromRow<SessionSummary>(row))
}

/** Deletes the sessions of `ids`; returns the ids this statement deleted (not those already gone). */
export async function deleteSessions(tx: Tx, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return []
  const deleted = await deleteReturning<{ id: string }>(sql(tx), sql(tx)('sessions').whereIn('id', ids), ['id'])
  return deleted.map((row) => row.id)
}
