/**
 * Idempotency keys: reservations while a request runs, then its sealed
 * response. This layer sees only ciphertext; sealing lives in the service.
 * Beside them, the reservations whose request committed its change
 * (`idempotency_commits`), written with the change itself.
 */
import { sql, type Db, type Tx } from '../connections'
import type { AddOnConflict } from '../sql'
import type { RowBuffer } from '../write-queue'

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

/** The row holding a key, and whether its request committed its change (when it has: the request's hash, from `idempotency_commits`). */
export interface IdempotencyHolder extends IdempotencyRecord {
  committed_request_hash: string | null
}

const TABLE = 'idempotency_keys'
const COMMITS = 'idempotency_commits'
const COMMIT_COLUMNS = ['reservation', 'request_hash', 'changes', 'expires_at'] as const
/** A request's second change (another transaction, or another audit call in one) counts up instead of failing on the reservation. */
const COUNT_CHANGES: AddOnConflict = { key: ['reservation'], column: 'changes' }

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
 * the row if it is `stale` (expired, or an abandoned reservation whose request
 * changed nothing), then inserts if absent. Returns the row now holding the
 * key, whoever's it is.
 */
export async function reserveIdempotencyKey(tx: Tx, record: IdempotencyRecord, stale: (row: IdempotencyHolder) => boolean): Promise<IdempotencyHolder> {
  const existing = await findIdempotencyHolder(tx, record)
  if (existing && stale(existing)) await sql(tx)(TABLE).where({ ...byId(record), reservation: existing.reservation }).delete()
  await sql(tx)(TABLE).insert(record).onConflict(['tenant_id', 'caller_id', 'idempotency_key']).ignore()
  return (await findIdempotencyHolder(tx, record))!
}

export async function findIdempotencyRecord(db: Db, id: IdempotencyId): Promise<IdempotencyRecord | undefined> {
  const row: IdempotencyRecord | undefined = await sql(db)(TABLE).where(byId(id)).first()
  return row && fromRow(row)
}

/** The row holding the key, with its request's commit if any: one probe of each table's key. */
async function findIdempotencyHolder(db: Db, id: IdempotencyId): Promise<IdempotencyHolder | undefined> {
  const row: IdempotencyHolder | undefined = await sql(db)(`${TABLE} as k`)
    .leftJoin(`${COMMITS} as c`, 'c.reservation', 'k.reservation')
    .where({ 'k.tenant_id': id.tenant_id, 'k.caller_id': id.caller_id, 'k.idempotency_key': id.idempotency_key })
    .first('k.*', 'c.request_hash as committed_request_hash')
  return row && { ...fromRow(row), committed_request_hash: row.committed_request_hash ?? null }
}

/**
 * Queues, with a change of the request holding `reservation`, the row saying
 * that request committed (in the change's transaction or appended unit).
 */
export function appendIdempotencyCommit(rows: RowBuffer, reservation: string, requestHash: string, expiresAt: number): void {
  rows.insert(COMMITS, COMMIT_COLUMNS, [{ reservation, request_hash: requestHash, changes: 1, expires_at: expiresAt }], { addTo: COUNT_CHANGES })
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

/**
 * Frees the key held by `reservation` (its request failed: a retry runs afresh),
 * unless its request committed a change: then the key stays held, without a
 * response, and is never run again under it.
 */
export async function releaseIdempotencyKey(tx: Tx, id: IdempotencyId, reservation: string): Promise<void> {
  await sql(tx)(TABLE)
    .where({ ...byId(id), reservation })
    .whereNotExists((committed) => committed.select(sql(tx).raw('1')).from(COMMITS).where({ reservation }))
    .delete()
}

/** Deletes up to `limit` keys expired by `now`, and up to `limit` commits of expired keys; returns the larger count. */
export async function deleteExpiredIdempotencyRecords(tx: Tx, now: number, limit: number): Promise<number> {
  const due: IdempotencyRecord[] = await sql(tx)(TABLE).select('tenant_id', 'caller_id', 'idempotency_key').where('expires_at', '<=', now).orderBy('expires_at').limit(limit)
  let deleted = 0
  for (const row of due) deleted += await sql(tx)(TABLE).where(byId(row)).andWhere('expires_at', '<=', now).delete()
  const commits = await sql(tx)(COMMITS)
    .whereIn('reservation', sql(tx)(COMMITS).select('reservation').where('expires_at', '<=', now).orderBy('expires_at').limit(limit))
    .delete()
  return Math.max(deleted, commits)
}
