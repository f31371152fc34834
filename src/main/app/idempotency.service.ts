/**
 * Idempotency keys (Basis Theory's `BT-IDEMPOTENCY-KEY`): the first write a
 * caller sends under a key runs and its response is kept 24 hours, sealed
 * with the tenant data key; the same request again replays it, another
 * request under the key is refused (422), and one arriving while the first
 * still runs is refused (409). Keys belong to a caller (application or
 * session): another caller's equal key is a different key.
 *
 * A stored response outlives the rights and retention of what it showed, so
 * it never keeps token data or a secret: tokens are kept as their identity,
 * a response holding a key or nonce only as the fact that it succeeded. A
 * replay needs the route's permission as the caller holds it now.
 *
 * The response is stored after the request's change committed, in a
 * transaction of its own: the service can stop in between (kill -9). So the
 * change itself records that its request committed (the request's actor
 * carries its key: audit.ts writes the record with the change's audit
 * entries), and a reservation left without a response is run again only if
 * its request changed nothing. One whose request committed is never run
 * again under its key: a retry is a 409 saying the response was lost.
 */
import { openJson, sealJson } from '../crypto/aead'
import { keyedHash } from '../crypto/hashing'
import { newId } from '../crypto/random'
import type { Permission } from '../../shared/types'
import { holdsPermission, requireTokenAccess } from '../domain/access'
import type { Actor, HeldIdempotencyKey } from '../domain/actor'
import { AppError, ConflictError, ForbiddenError } from '../domain/errors'
import {
  completeIdempotencyRecord,
  deleteExpiredIdempotencyRecords,
  releaseIdempotencyKey,
  reserveIdempotencyKey,
  type IdempotencyHolder,
  type IdempotencyId,
  type IdempotencyRecord
} from '../storage/repositories/idempotency.repository'
import { audit } from './audit'
import { idempotentResponseAssociatedData } from './token-crypto'
import type { ServiceContext } from './service-context'

/** How long a response is replayed. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000
/**
 * A reservation without a response older than this is taken to be abandoned
 * (its service stopped mid-request): far longer than any request runs. The
 * key is then free again if its request changed nothing, and answers that the
 * response was lost if it did.
 */
export const ABANDONED_RESERVATION_MS = 15 * 60_000

/** What a write request is, for telling a retry from a different request under the same key. */
export interface IdempotentRequest {
  method: string
  /** Path and query string. */
  url: string
  /** The route it goes to, as the routers name it (`DELETE /tokens/:id`): what the audit entry of a replay names, not the caller's path. */
  route: string
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

/**
 * What of a route's response is kept for replays:
 * - `response`: all of it (it holds no token data and no secret);
 * - `token-identities`: each token or token intent in it reduced to `id`,
 *   `tenant_id`, `type`, `fingerprint` and `containers` (data, masks and
 *   metadata follow the token's own rights and retention, not the key's);
 * - `outcome`: only that it succeeded and the `id` it made (it holds a key or
 *   a nonce, shown once); a replay is a 409 saying so.
 */
export type Keeping = 'response' | 'token-identities' | 'outcome'

/** How a route is replayed: what is kept, and the permissions a replay needs now, all of them (none for routes gated by key type). */
export interface ReplayRule {
  keep: Keeping
  permissions?: readonly Permission[]
}

/** What is sealed for a key: the response as kept, or, when withheld, the id of what the request made. */
interface SealedResponse {
  type: string
  body: unknown
  withheld?: { id?: string }
}

/**
 * A key held for one running request: completed with its response or released if it fails.
 * The request's actor carries it while it runs, so that its change records it (audit.ts).
 */
export interface Reservation extends HeldIdempotencyKey {
  id: IdempotencyId
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
  async admit(actor: Actor, key: string, request: IdempotentRequest, rule: ReplayRule): Promise<Admission> {
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
    const abandoned = (row: IdempotencyHolder) => row.status_code === null && row.created_at + ABANDONED_RESERVATION_MS <= now
    // An abandoned reservation whose request committed its change keeps the key: its request is not run again.
    const stale = (row: IdempotencyHolder) => row.expires_at <= now || (abandoned(row) && row.committed_request_hash === null)
    // Reserved before the body is read: a second request arriving meanwhile already sees the key taken.
    const holder = await this.context.writes.run((trx) => reserveIdempotencyKey(trx, mine, stale))
    if (holder.reservation === mine.reservation) {
      const reservation: Reservation = { id, reservation: mine.reservation, requestHash: '', expiresAt: mine.expires_at }
      try {
        reservation.requestHash = this.requestHash(actor.tenantId, request, await request.readBody())
      } catch (error) {
        await this.release(reservation)
        throw error
      }
      return { kind: 'run', reservation }
    }
    if (holder.status_code === null) {
      if (!abandoned(holder)) throw new ConflictError(`A request with this ${HEADER} is still running; retry once it has finished.`)
      // Abandoned, yet kept (not stale): its request committed its change, and its response was never stored.
      if (holder.committed_request_hash !== this.requestHash(actor.tenantId, request, await request.readBody())) throw usedForAnotherRequest()
      throw lostResponse()
    }
    if (holder.request_hash !== this.requestHash(actor.tenantId, request, await request.readBody())) throw usedForAnotherRequest()
    const sealed = openJson<SealedResponse>(this.context.keyring.dataKey(id.tenant_id, holder.key_version!), holder.sealed_response!, idempotentResponseAssociatedData(id.tenant_id, holder.reservation))
    // Kept again under today's rule: a response stored under an older, looser one hands out no more.
    const kept = sealed.withheld ? sealed : toKeep(actor.tenantId, rule.keep, { status: holder.status_code, ...sealed })
    requireStillPermitted(actor, rule, jsonValueOf(kept))
    const { type, body, withheld } = kept
    if (withheld) throw withheldReplay(holder.status_code, withheld.id)
    await audit(this.context.writes, now, [
      { actor, entityType: 'idempotency-key', entityId: holder.reservation, operation: 'read', message: `Stored response (${holder.status_code}) replayed for ${request.route}` }
    ])
    return { kind: 'replay', response: { status: holder.status_code, type, body } }
  }

  /** Keeps the response of the request holding `reservation`, sealed, for replays. */
  async complete(reservation: Reservation, response: StoredResponse, keep: Keeping): Promise<void> {
    const { version, key } = this.context.keyring.currentDataKey(reservation.id.tenant_id)
    const kept = toKeep(reservation.id.tenant_id, keep, response)
    const sealed = Buffer.from(sealJson(key, kept, idempotentResponseAssociatedData(reservation.id.tenant_id, reservation.reservation)))
    await this.context.writes.run((trx) =>
      completeIdempotencyRecord(trx, reservation.id, reservation.reservation, {
        request_hash: reservation.requestHash,
        status_code: response.status,
        key_version: version,
        sealed_response: sealed
      })
    )
  }

  /** Frees the key: the request failed, so a retry under the key runs again (unless it had committed a change all the same). */
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

/** The part of a response that `keep` lets the store hold. */
function toKeep(tenantId: string, keep: Keeping, response: StoredResponse): SealedResponse {
  if (keep === 'response') return { type: response.type, body: response.body }
  if (keep === 'outcome') return { type: '', body: null, withheld: { id: idOf(response.body) } }
  const reduced = reduceToIdentities(jsonValueOf(response), tenantId)
  return { type: response.type, body: sentAsText(response) ? JSON.stringify(reduced) : reduced }
}

/** JSON a route sent as text (`POST /tokenize`), so that it reaches the client as it is. */
function sentAsText(response: Pick<StoredResponse, 'type' | 'body'>): boolean {
  return typeof response.body === 'string' && response.type === 'application/json'
}

function jsonValueOf(response: Pick<StoredResponse, 'type' | 'body'>): unknown {
  return sentAsText(response) ? JSON.parse(response.body as string) : response.body
}

function idOf(body: unknown): string | undefined {
  const id = isObject(body) ? body.id : undefined
  return typeof id === 'string' ? id : undefined
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A token or token intent as a response shows it. The tenant id tells it from
 * an object of a tokenize result, whose strings are all token ids.
 */
function isTokenLike(value: Record<string, unknown>, tenantId: string): boolean {
  return value.tenant_id === tenantId && typeof value.id === 'string' && typeof value.type === 'string' && typeof value.fingerprint === 'string'
}

const IDENTITY_FIELDS = ['id', 'tenant_id', 'type', 'fingerprint', 'containers', 'created_by', 'created_at', 'modified_by', 'modified_at', 'expires_at'] as const

/** Each token in `value` reduced to its identity (what a caller that cannot read a token learns of it); the rest as is. */
function reduceToIdentities(value: unknown, tenantId: string): unknown {
  if (Array.isArray(value)) return value.map((item) => reduceToIdentities(item, tenantId))
  if (!isObject(value)) return value
  if (isTokenLike(value, tenantId)) return Object.fromEntries(IDENTITY_FIELDS.filter((field) => field in value).map((field) => [field, value[field]]))
  return Object.fromEntries(Object.entries(value).map(([field, item]) => [field, reduceToIdentities(item, tenantId)]))
}

/** The kept tokens (with containers) of a kept body, for checking each as a new request would. */
function keptTokens(value: unknown, tenantId: string, found: { id: string; containers: string[] }[] = []): { id: string; containers: string[] }[] {
  if (Array.isArray(value)) value.forEach((item) => keptTokens(item, tenantId, found))
  else if (isObject(value)) {
    if (isTokenLike(value, tenantId) && Array.isArray(value.containers)) found.push({ id: value.id as string, containers: value.containers as string[] })
    else Object.values(value).forEach((item) => keptTokens(item, tenantId, found))
  }
  return found
}

/**
 * A replay is answered only if the caller could send the request now: it holds
 * the route's permission, and on each token of the kept answer (a token
 * permission is granted per container).
 */
function requireStillPermitted(actor: Actor, rule: ReplayRule, kept: unknown): void {
  for (const permission of rule.permissions ?? []) {
    if (!holdsPermission(actor, permission)) throw new ForbiddenError(`The caller lacks the ${permission} permission.`)
    if (rule.keep === 'token-identities') for (const token of keptTokens(kept, actor.tenantId)) requireTokenAccess(actor, permission, token)
  }
}

function usedForAnotherRequest(): AppError {
  return new AppError('business_rule', `This ${HEADER} was already used for a different request; use a new key for a new request.`, {
    [HEADER]: ['was already used for another method, path or body']
  })
}

/** A reservation whose request committed its change, but whose response was never stored (its service stopped in between). */
function lostResponse(): ConflictError {
  return new ConflictError(
    `The request sent with this ${HEADER} was carried out (its change was committed), but its response was lost (the service stopped before keeping it), so it is not run again. Look up its result instead: read what it made or changed, or its entries in the audit log (GET /logs). Sending it again under a new key would run it a second time.`
  )
}

function withheldReplay(status: number, id: string | undefined): ConflictError {
  const made = id ? ` (id ${id})` : ''
  return new ConflictError(
    `The request sent with this ${HEADER} already succeeded (${status})${made} and is not run again. Its response held a key or nonce, which is shown only once and not kept for replays: read the result with a new request instead.`
  )
}
