/**
 * Idempotency keys: reservations while a request runs, then its sealed
 * response. This layer sees only ciphertext; sealing lives in the service.
 */
import { sql, type Db, type Tx } from '../connections'

export interface IdempotencyRecord {
  tenant_id: string
  caller_id: string
  idempotency_key: string
  reservation: string
  request_hash: string | null
  status_code: number | null
  key_version: number | null
  sealed_response: Buffer | null
  created_at: number
  expires_at: number
}

export type IdempotencyId = Pick<IdempotencyRecord, 'tenant_id' | 'caller_id' | 'idempotency_key'>

const TABLE = 'idempotency_keys'

function fromRow(row: IdempotencyRecord): IdempotencyRecord {
  return {
    ...row,
    status_code: row.status_code === null ? null : Number(row.status_code),
    key_version: row.key_version === null ? null : Number(row.key_version),
    created_at: Number(row.created_at),
    expires_at: Number(row.expires_at)
  }
}

const byId = (id: IdempotencyId) => ({ tenant_id: id.tenant_id, caller_id: id.caller_id, idempotency_key: id.idempotency_key })

/**
 * Takes the key for `reservation` unless another request holds it: first drops
 * the row if it is `stale` (expired, or an abandoned reservation), then inserts
 * if absent. Returns the row now holding the key, whoever's it is.
 */
export async function reserveIdempotencyKey(tx: Tx, record: IdempotencyRecord, stale: (row: IdempotencyRecord) => boolean): Promise<IdempotencyRecord> {
  const existing = await findIdempotencyRecord(tx, record)
  if (existing && stale(existing)) await sql(tx)(TABLE).where({ ...byId(record), reservation: existing.reservation }).delete()
  await sql(tx)(TABLE).insert(record).onConflict(['tenant_id', 'caller_id', 'idempotency_key']).ignore()
  return (await findIdempotencyRecord(tx, record))!
}

export async function findIdempotencyRecord(db: Db, id: IdempotencyId): Promise<IdempotencyRecord | undefined> {
  const row: IdempotencyRecord | undefined = await sql(db)(TABLE).where(byId(id)).first()
  return row && fromRow(row)
}

/** Stores the response of the request holding `reservation`. */
export async function completeIdempotencyRecord(
  tx: Tx,
  id: IdempotencyId,
  reservation: string,
  response: Pick<IdempotencyRecord, 'request_hash' | 'status_code' | 'key_version' | 'sealed_response'>
): Promise<void> {
  await sql(tx)(TABLE).where({ ...byId(id), reservation }).update(response)
}

/** Frees the key held by `reservation` (its request failed: a retry runs afresh). */
export async function releaseIdempotencyKey(tx: Tx, id: IdempotencyId, reservation: string): Promise<void> {
  await sql(tx)(TABLE).where({ ...byId(id), reservation }).delete()
}

/** Deletes up to `limit` rows expired by `now`; returns how many. */
export async function deleteExpiredIdempotencyRecords(tx: Tx, now: number, limit: number): Promise<number> {
  const due: IdempotencyRecord[] = await sql(tx)(TABLE).select('tenant_id', 'caller_id', 'idempotency_key').where('expires_at', '<=', now).orderBy('expires_at').limit(limit)
  let deleted = 0
  for (const row of due) deleted += await sql(tx)(TABLE).where(byId(row)).andWhere('expires_at', '<=', now).delete()
  return deleted
}
