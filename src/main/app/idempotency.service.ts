/**
 * Idempotency keys (Basis Theory's `BT-IDEMPOTENCY-KEY`): the first write a
 * caller sends under a key runs and its response is kept 24 hours, sealed
 * with the tenant data key; the same request again replays it, another
 * request under the key is refused (422), and one arriving while the first
 * still runs is refused (409). Keys belong to a caller (application or
 * session): another caller's equal key is a different key.
 */
import { openJson, sealJson } from '../crypto/aead'
import { keyedHash } from '../crypto/hashing'
import { newId } from '../crypto/random'
import type { Actor } from '../domain/actor'
import { AppError, ConflictError } from '../domain/errors'
import {
  completeIdempotencyRecord,
  deleteExpiredIdempotencyRecords,
  releaseIdempotencyKey,
  reserveIdempotencyKey,
  type IdempotencyId,
  type IdempotencyRecord
} from '../storage/repositories/idempotency.repository'
import { audit } from './audit'
import { idempotentResponseAssociatedData } from './token-crypto'
import type { ServiceContext } from './service-context'

/** How long a response is replayed. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000
/**
 * A reservation older than this is taken to be abandoned (its service stopped
 * mid-request) and the key free again: far longer than any request runs.
 */
export const ABANDONED_RESERVATION_MS = 15 * 60_000

/** What a write request is, for telling a retry from a different request under the same key. */
export interface IdempotentRequest {
  method: string
  /** Path and query string. */
  url: string
  /** Reads the body's bytes; called only once the key is taken or found used. */
  readBody(): Promise<Buffer>
}

export interface StoredResponse {
  status: number
  /** Content type as sent; empty when the response had no body. */
  type: string
  /** The body: a JSON value, text, or null when there was none. */
  body: unknown
}

/** A key held for one running request: completed with its response or released if it fails. */
export interface Reservation {
  id: IdempotencyId
  reservation: string
  requestHash: string
}

/** The request header carrying the key. */
export const HEADER = 'BT-IDEMPOTENCY-KEY'

export type Admission = { kind: 'run'; reservation: Reservation } | { kind: 'replay'; response: StoredResponse }


export class IdempotencyService {
  constructor(private readonly context: ServiceContext) {}

  /**
   * Admits a write sent under `key`: to run (the key is now held for it) or
   * to replay the stored response. 409 while another request holds the key,
   * 422 when the stored response is for a different request.
   */
  async admit(actor: Actor, key: string, request: IdempotentRequest): Promise<Admission> {
    const now = this.context.clock.now()
    const id: IdempotencyId = { tenant_id: actor.tenantId, caller_id: actor.id, idempotency_key: key }
    const mine: IdempotencyRecord = {
      ...id,
      reservation: newId(),
      request_hash: null,
      status_code: null,
      key_version: null,
      sealed_response: null,
      created_at: now,
      expires_at: now + IDEMPOTENCY_WINDOW_MS
    }
    const stale = (row: IdempotencyRecord) => row.expires_at <= now || (row.status_code === null && row.created_at + ABANDONED_RESERVATION_MS <= now)
    // Reserved before the body is read: a second request arriving meanwhile already sees the key taken.
    const holder = await this.context.writes.run((trx) => reserveIdempotencyKey(trx, mine, stale))
    if (holder.reservation === mine.reservation) {
      const reservation: Reservation = { id, reservation: mine.reservation, requestHash: '' }
      try {
        reservation.requestHash = this.requestHash(actor.tenantId, request, await request.readBody())
      } catch (error) {
        await this.release(reservation)
        throw error
      }
      return { kind: 'run', reservation }
    }
    if (holder.status_code === null) throw new ConflictError(`A request with this ${HEADER} is still running; retry once it has finished.`)
    if (holder.request_hash !== this.requestHash(actor.tenantId, request, await request.readBody())) {
      throw new AppError('business_rule', `This ${HEADER} was already used for a different request; use a new key for a new request.`, {
        [HEADER]: ['was already used for another method, path or body']
      })
    }
    const { type, body } = openJson<Omit<StoredResponse, 'status'>>(this.context.keyring.dataKey(id.tenant_id, holder.key_version!), holder.sealed_response!, idempotentResponseAssociatedData(id.tenant_id, holder.reservation))
    await audit(this.context.writes, now, [
      { actor, entityType: 'idempotency-key', entityId: holder.reservation, operation: 'read', message: `Stored response (${holder.status_code}) replayed for ${request.method} ${request.url.split('?')[0]}` }
    ])
    return { kind: 'replay', response: { status: holder.status_code, type, body } }
  }

  /** Keeps the response of the request holding `reservation`, sealed, for replays. */
  async complete(reservation: Reservation, response: StoredResponse): Promise<void> {
    const { version, key } = this.context.keyring.currentDataKey(reservation.id.tenant_id)
    const sealed = Buffer.from(sealJson(key, { type: response.type, body: response.body }, idempotentResponseAssociatedData(reservation.id.tenant_id, reservation.reservation)))
    await this.context.writes.run((trx) =>
      completeIdempotencyRecord(trx, reservation.id, reservation.reservation, {
        request_hash: reservation.requestHash,
        status_code: response.status,
        key_version: version,
        sealed_response: sealed
      })
    )
  }

  /** Frees the key: the request failed, so a retry under the key runs again. */
  async release(reservation: Reservation): Promise<void> {
    await this.context.writes.run((trx) => releaseIdempotencyKey(trx, reservation.id, reservation.reservation))
  }

  /** Deletes up to `limit` keys past their 24 hours; returns how many. The `expire-idempotency-keys` sweep. */
  async expireDue(now: number, limit: number): Promise<number> {
    return this.context.writes.run((trx) => deleteExpiredIdempotencyRecords(trx, now, limit))
  }

  /** Keyed (the body can hold card numbers): equal only for the same method, URL and body bytes. */
  private requestHash(tenantId: string, request: IdempotentRequest, body: Buffer): string {
    const head = Buffer.from(`idempotency\u0000${request.method}\u0000${request.url}\u0000`, 'utf8')
    return keyedHash(this.context.keyring.fingerprintKey(tenantId), Buffer.concat([head, body]))
  }
}
