/**
 * Short-lived sessions (spec "Sessions"). A public application
 * creates one and hands its key to a browser or phone; a private application
 * authorizes it through the nonce with exactly the access the client needs.
 * Until then, and after `expires_at`, the session key is a 401.
 *
 * A session never outlives the authority behind it: `expires_at` is capped
 * (24 hours by default), the key stops working as soon as the application
 * that created or authorized it is deleted, expires or gets a new key, or the
 * authorizing application is changed so it no longer holds what it granted.
 * Management keys list active sessions and revoke them.
 */
import type { Tx } from '../storage/connections'
import type { AuthorizeSessionInput, ListSessionsQuery } from '../../shared/contracts'
import type { AccessRule, ApplicationType, Page, Permission, Session, SessionCreated } from '../../shared/types'
import { newId } from '../crypto/random'
import { generateSecret, hashSecret } from '../crypto/secrets'
import { findApplication, findApplicationHoldingKey, type ApplicationRecord } from '../storage/repositories/applications.repository'
import {
  authorizeSession,
  countActiveSessions,
  deleteSessions,
  findSession,
  findSessionByNonceHash,
  findSessionCredential,
  insertSession,
  listActiveSessions,
  deleteExpiredSessions,
  type SessionSummary
} from '../storage/repositories/sessions.repository'
import { grantBeyond, requirePermission } from '../domain/access'
import { applicationActor, invalidKeyOfType, SESSION_KEY_PREFIX, type AuthService, type CachedActor } from './auth.service'
import type { Actor } from '../domain/actor'
import { parseIsoExpiresAt, toIsoString } from '../domain/dates'
import { ConflictError, ForbiddenError, NotFoundError, UnauthenticatedError, ValidationError } from '../domain/errors'
import { uuidPathId } from '../domain/ids'
import { normalisePermissions, normaliseRules, requireSomeGrant } from '../domain/grants'
import type { ServiceContext } from './service-context'
import { emitEvent } from './webhook-events'
import { audit, type AuditActor } from './audit'
import { offsetOf, toPage } from '../domain/pagination'
import { notifyChange } from '../storage/change-feed'

/** Default lifetime of a session (spec "Limits"). */
export const SESSION_LIFETIME_MS = 3 * 60_000

const HOUR_MS = 3_600_000
/** How far ahead an authorization may set `expires_at`, unless configured otherwise (`TESSERA_SESSION_MAX_TTL`). */
export const DEFAULT_SESSION_MAX_TTL_MS = 24 * HOUR_MS

/** The cap as a 400 names it: `24 hours`, `7 days`, `90 minutes`. */
function describeDuration(ms: number): string {
  const units = [['day', 24 * HOUR_MS], ['hour', HOUR_MS], ['minute', 60_000], ['second', 1000]] as const
  // A single day reads better as 24 hours.
  const [unit, size] = units.find(([name, length]) => ms % length === 0 && (name !== 'day' || ms > length)) ?? units[3]
  return `${Math.floor(ms / size)} ${unit}${ms === size ? '' : 's'}`
}

/** A session's grant as access rules read it. */
function grantOf(row: Pick<SessionSummary, 'permissions' | 'rules'>): { permissions: Permission[]; rules: AccessRule[] } {
  return { permissions: row.permissions, rules: row.rules }
}

function toSession(row: SessionSummary): Session {
  const authorized = row.authorized_at !== null
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    application_id: row.application_id,
    status: authorized ? 'AUTHORIZED' : 'PENDING',
    ...(row.authorized_by ? { authorized_by: row.authorized_by } : {}),
    ...(authorized ? { authorized_at: toIsoString(Number(row.authorized_at)) } : {}),
    ...grantOf(row),
    expires_at: toIsoString(Number(row.expires_at)),
    created_at: toIsoString(Number(row.created_at))
  }
}

/**
 * A private application may hand a session only what it holds itself: each
 * permission, on every token the session could reach with it, under no more
 * revealing a transform than the application's own rules give there. So a
 * session is never a way around its application's grant.
 */
function requireHeldPermissions(actor: Actor, grant: { permissions: Permission[]; rules: AccessRule[] }): void {
  const beyond = grantBeyond(actor, grant)
  if (beyond.length) throw new ForbiddenError(`The application cannot grant more than it holds: ${beyond.join(', ')}.`)
}

function requireApplicationType(actor: Actor, type: ApplicationType, operation: string): void {
  if (actor.type !== 'application' || actor.applicationType !== type) {
    throw new ForbiddenError(`Only a ${type} application's key can ${operation}.`)
  }
}

function sessionMessage(what: string, application: Actor, person: AuditActor | undefined): string {
  return person ? `${what} through application ${application.id}` : what
}

/** The authorized sessions among `sessions` that grant more than `application` (as it is now) holds. */
export function sessionsBeyondGrant(application: Actor, sessions: readonly SessionSummary[]): SessionSummary[] {
  return sessions.filter((session) => session.authorized_at !== null && grantBeyond(application, grantOf(session)).length > 0)
}

/**
 * Deletes sessions inside the caller's transaction, with one log entry for each
 * it deleted (`actor` null for the expiry sweep; one deleted meanwhile by another
 * instance is left to that one's entry). Returns the ids asked for: the caller
 * evicts them from the key cache once the transaction has committed.
 */
export async function revokeSessions(
  trx: Tx,
  actor: Actor | null,
  sessions: readonly Pick<SessionSummary, 'id' | 'tenant_id'>[],
  message: string,
  now: number
): Promise<string[]> {
  const ids = sessions.map((session) => session.id)
  const deleted = new Set(await deleteSessions(trx, ids))
  await notifyChange(trx, { kind: 'session', ids: [...deleted] })
  audit(
    trx,
    now,
    sessions
      .filter((session) => deleted.has(session.id))
      .map((session) => ({ actor, tenantId: session.tenant_id, entityType: 'session', entityId: session.id, operation: 'delete', message }))
  )
  return ids
}

export class SessionsService {
  private readonly maxTtlMs: number

  constructor(
    private readonly context: ServiceContext,
    private readonly auth: AuthService,
    options: { maxTtlMs?: number } = {}
  ) {
    this.maxTtlMs = options.maxTtlMs ?? DEFAULT_SESSION_MAX_TTL_MS
    auth.setSessionResolver((keyHash, now) => this.resolve(keyHash, now))
  }

  /**
   * `POST /sessions`: a new, unauthorized session of the calling public
   * application. Also returns its `id`, which the REST response leaves out
   * (the spec's create response has none) and the desktop uses to list it.
   * `person`: who acts through the application (the desktop user), named in
   * the log instead of it.
   */
  async create(actor: Actor, person?: AuditActor): Promise<SessionCreated & { id: string }> {
    requireApplicationType(actor, 'public', 'create a session')
    const { keyring, clock, writes } = this.context
    const now = clock.now()
    const id = newId()
    const sessionKey = generateSecret(SESSION_KEY_PREFIX)
    const nonce = generateSecret('nonce')
    const expiresAt = now + Math.min(SESSION_LIFETIME_MS, this.maxTtlMs)
    const row = {
      id,
      tenant_id: actor.tenantId,
      application_id: actor.id,
      key_hash: hashSecret(keyring.secretHashKey, sessionKey),
      nonce_hash: hashSecret(keyring.secretHashKey, nonce),
      authorized_by: null,
      authorized_at: null,
      permissions: [],
      rules: [],
      expires_at: expiresAt,
      created_at: now
    }
    await writes.run(async (trx) => {
      // A key regenerated away or deleted since it authenticated this request creates nothing.
      await this.liveApplication(trx, actor, now)
      await insertSession(trx, row)
      audit(trx, now, [
        { actor: person ?? actor, tenantId: actor.tenantId, entityType: 'session', entityId: id, operation: 'create', message: sessionMessage('Session created', actor, person) }
      ])
      emitEvent(this.context, trx, now, 'session.created', person ?? actor, { id, tenant_id: actor.tenantId, application_id: actor.id, expires_at: toIsoString(expiresAt), created_at: toIsoString(now) }, actor.tenantId)
    })
    return { id, session_key: sessionKey, nonce, expires_at: toIsoString(expiresAt) }
  }

  /**
   * `POST /sessions/authorize`: grants the session behind `nonce` its access.
   * A nonce works once (409 afterwards); an unknown or expired one is a 404.
   * `person` as for `create`.
   */
  async authorize(actor: Actor, input: AuthorizeSessionInput, person?: AuditActor): Promise<void> {
    requireApplicationType(actor, 'private', 'authorize a session')
    requireSomeGrant(input)
    const { keyring, clock, writes } = this.context
    const now = clock.now()
    const expiresAt = input.expires_at === undefined ? undefined : this.parseExpiresAt(input.expires_at, now)
    const nonceHash = hashSecret(keyring.secretHashKey, input.nonce)
    const permissions = normalisePermissions(input.permissions)
    const rules = normaliseRules(input.rules)
    const sessionId = await writes.run(async (trx) => {
      // Checked against the application as it is in this transaction, not as its
      // key was cached: an update committed meanwhile must not be bypassed, nor a key
      // regenerated away or deleted since it authenticated this request.
      requireHeldPermissions(applicationActor(await this.liveApplication(trx, actor, now)), { permissions, rules })
      const session = await findSessionByNonceHash(trx, actor.tenantId, nonceHash)
      if (!session || Number(session.expires_at) <= now) throw new NotFoundError('Session')
      if (session.authorized_at !== null) throw new ConflictError('This nonce has already been used.')
      const changed = await authorizeSession(trx, session.id, {
        permissions,
        rules,
        authorized_by: actor.id,
        authorized_at: now,
        expires_at: expiresAt ?? Number(session.expires_at)
      })
      if (changed !== 1) throw new ConflictError('This nonce has already been used.')
      await notifyChange(trx, { kind: 'session', ids: [session.id] })
      audit(trx, now, [
        { actor: person ?? actor, tenantId: actor.tenantId, entityType: 'session', entityId: session.id, operation: 'authorize', message: sessionMessage('Session authorized', actor, person) }
      ])
      const authorized = { id: session.id, tenant_id: actor.tenantId, authorized_by: actor.id, permissions, rules, expires_at: toIsoString(expiresAt ?? Number(session.expires_at)), authorized_at: toIsoString(now) }
      emitEvent(this.context, trx, now, 'session.authorized', person ?? actor, authorized, actor.tenantId)
      return session.id
    })
    this.auth.evict(sessionId)
  }

  /**
   * `GET /sessions`: the tenant's sessions that have not expired, authorized or
   * not, newest first. Never their keys or nonces (only hashes are stored).
   * Each listed session gets a "Session listed" log entry.
   */
  async list(actor: Actor, q: ListSessionsQuery): Promise<Page<Session>> {
    requirePermission(actor, 'application:read')
    const now = this.context.clock.now()
    const { reader, writes } = this.context
    const [total, rows] = await Promise.all([
      countActiveSessions(reader, actor.tenantId, now),
      listActiveSessions(reader, actor.tenantId, now, q.size, offsetOf(q))
    ])
    await audit(writes, now, rows.map((row) => ({ actor, entityType: 'session', entityId: row.id, operation: 'read', message: 'Session listed' })))
    return toPage(rows.map(toSession), total, q)
  }

  /** `DELETE /sessions/{id}`: the session's key is refused from now on. An unknown or expired session is a 404. */
  async revoke(actor: Actor, rawId: string): Promise<void> {
    requirePermission(actor, 'application:delete')
    const id = uuidPathId(rawId, 'Session')
    const now = this.context.clock.now()
    await this.context.writes.run(async (trx) => {
      const session = await findSession(trx, actor.tenantId, id)
      if (!session || Number(session.expires_at) <= now) throw new NotFoundError('Session')
      await revokeSessions(trx, actor, [session], 'Session revoked', now)
      emitEvent(this.context, trx, now, 'session.revoked', actor, { id: session.id, tenant_id: actor.tenantId })
    })
    this.auth.evict(id)
  }

  /** Deletes sessions past `expires_at` (the expiry job); returns how many. */
  async expireDue(now: number, limit: number): Promise<number> {
    const deleted = await this.context.writes.run(async (trx) => {
      const expired = await deleteExpiredSessions(trx, now, limit)
      audit(
        trx,
        now,
        expired.map((session) => ({ actor: null, tenantId: session.tenant_id, entityType: 'session', entityId: session.id, operation: 'expire', message: 'Session expired' }))
      )
      await notifyChange(trx, { kind: 'session', ids: expired.map((session) => session.id) })
      return expired
    })
    this.auth.evict(...deleted.map((session) => session.id))
    return deleted.length
  }

  /** `expires_at` of an authorization: ISO 8601, in the future, and no further ahead than the cap. */
  private parseExpiresAt(value: string, now: number): number {
    const expiresAt = parseIsoExpiresAt(value, 'expires_at', new Date(now)).getTime()
    if (expiresAt > now + this.maxTtlMs) {
      throw ValidationError.field('expires_at', `must be at most ${describeDuration(this.maxTtlMs)} from now`)
    }
    return expiresAt
  }

  /**
   * The application `actor` stands for, as it is in the write transaction `trx`; 401, as
   * the key would be now, if it was deleted or expired, or the key the request
   * authenticated with (`actor.keyId`) was regenerated away or deleted, since then.
   *
   * This is what keeps a session from outliving its application's key: a regenerate
   * revokes the sessions that exist when it commits, so a session must not be created
   * or authorized with the old key after that. The transaction follows every one that
   * committed before it: SQLite has one writer, and on PostgreSQL each write transaction
   * of every instance first waits for the audit chain's lock (write-queue.ts, `resume`),
   * held until it ends; each statement after it sees what committed before.
   * An application a person acts through (the desktop) has no key: only it is checked.
   */
  private async liveApplication(trx: Tx, actor: Actor, now: number): Promise<ApplicationRecord> {
    const row = actor.keyId === undefined ? await findApplication(trx, actor.tenantId, actor.id) : await findApplicationHoldingKey(trx, actor.tenantId, actor.id, actor.keyId)
    const type = `key_${actor.applicationType}`
    if (!row) throw invalidKeyOfType(type, 'unknown')
    if (row.expires_at !== null && Number(row.expires_at) <= now) throw invalidKeyOfType(type, 'expired')
    return row
  }

  /**
   * The actor of an authorized session, valid until the earliest expiry of the
   * session and the applications that created and authorized it; undefined
   * (401) for unknown or expired keys and for sessions whose application is gone.
   * @throws UnauthenticatedError with its own message for a session not authorized yet
   */
  private async resolve(keyHash: string, now: number): Promise<CachedActor | undefined> {
    const row = await findSessionCredential(this.context.reader, keyHash)
    if (!row || Number(row.expires_at) <= now || row.creator_id === null) return undefined
    if (row.authorized_at === null) throw new UnauthenticatedError('This session has not been authorized yet.', 'session not authorized yet (type key_sess)')
    if (row.authorizer_id === null) return undefined
    const expiries = [row.expires_at, row.creator_expires_at, row.authorizer_expires_at].filter((value) => value !== null).map(Number)
    return {
      actor: { type: 'session', id: row.id, tenantId: row.tenant_id, applicationType: 'public', ...grantOf(row) },
      expiresAt: Math.min(...expiries)
    }
  }
}
