/**
 * Token intents: sealed data waiting to become a token. This layer sees only
 * ciphertext and the columns that may be shown; sealing lives in the service.
 */
import type { TokenIntentDetails } from '../../domain/token-intent'
import { sql, type Db, type Tx } from '../connections'

export interface TokenIntentRecord {
  tenant_id: string
  id: string
  type: string
  key_version: number
  sealed_data: Buffer
  fingerprint: string
  details: TokenIntentDetails
  created_by: string | null
  created_at: number
  expires_at: number
}

interface TokenIntentRow extends Omit<TokenIntentRecord, 'details'> {
  details: string
}

function fromRow(row: TokenIntentRow): TokenIntentRecord {
  return {
    ...row,
    key_version: Number(row.key_version),
    details: JSON.parse(row.details),
    created_at: Number(row.created_at),
    expires_at: Number(row.expires_at)
  }
}

const TABLE = 'token_intents'

export async function insertTokenIntent(tx: Tx, intent: TokenIntentRecord): Promise<void> {
  await sql(tx)(TABLE).insert({ ...intent, details: JSON.stringify(intent.details) })
}

/** The intent, unless it is absent or has expired by `now`. */
export async function findTokenIntent(db: Db, tenantId: string, id: string, now: number): Promise<TokenIntentRecord | undefined> {
  const row: TokenIntentRow | undefined = await sql(db)(TABLE).where({ tenant_id: tenantId, id }).andWhere('expires_at', '>', now).first()
  return row && fromRow(row)
}

/** Deletes the intent if it is still there and unexpired; false when another request consumed it first. */
export async function deleteTokenIntent(tx: Tx, tenantId: string, id: string, now: number): Promise<boolean> {
  const deleted = await sql(tx)(TABLE).where({ tenant_id: tenantId, id }).andWhere('expires_at', '>', now).delete()
  return deleted > 0
}

/** Up to `limit` intents whose lifetime has ended by `now`, oldest deadline first. */
export async function listExpiredTokenIntents(db: Db, now: number, limit: number): Promise<Pick<TokenIntentRecord, 'tenant_id' | 'id' | 'type'>[]> {
  return sql(db)(TABLE).select('tenant_id', 'id', 'type').where('expires_at', '<=', now).orderBy('expires_at').limit(limit)
}

/** Deletes one expired intent; false when it was already gone. */
export async function deleteExpiredTokenIntent(tx: Tx, tenantId: string, id: string, now: number): Promise<boolean> {
  const deleted = await sql(tx)(TABLE).where({ tenant_id: tenantId, id }).andWhere('expires_at', '<=', now).delete()
  return deleted > 0
}
