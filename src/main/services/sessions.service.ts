/**
 * Short-lived sessions (spec "Sessions", DESIGN §6). A public application
 * creates one and hands its key to a browser or phone; a private application
 * authorizes it through the nonce with exactly the access the client needs.
 * Until then, and after `expires_at`, the session key is a 401.
 */
import { z } from 'zod'
import type { AccessRule, ApplicationType, Permission, SessionCreated } from '../../shared/types'
import { newId } from '../crypto/random'
import { generateSecret, hashSecret } from '../crypto/secrets'
import {
  authorizeSession,
  deleteSessions,
  findSessionByKeyHash,
  findSessionByNonceHash,
  insertSession,
  listExpiredSessions
} from '../repositories/sessions.repository'
import { grantBeyond } from './access'
import { SESSION_KEY_PREFIX, type AuthService, type CachedActor } from './auth.service'
import type { Actor } from './context'
import { parseIsoExpiresAt, toIsoString } from './dates'
import { ConflictError, ForbiddenError, NotFoundError } from './errors'
import { grantFields, normalisePermissions, normaliseRules, requireSomeGrant } from './grants'
import type { ServiceContext } from './index'
import { logRow, recordLogs, type LogActor } from './logs.service'
import { parseOrThrow } from './validation'

/** Default lifetime of a session (spec "Limits"). */
export const SESSION_LIFETIME_MS = 3 * 60_000

const createBody = z.strictObject({}).optional()

const authorizeBody = z.strictObject({
  nonce: z.string().min(1, 'is required').max(200, 'is not a nonce issued by this service'),
  ...grantFields('private', { session: true }),
  expires_at: z.string().max(100).optional()
})

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

function sessionMessage(what: string, application: Actor, person: LogActor | undefined): string {
  return person ? `${what} through application ${application.id}` : what
}

export class SessionsService {
  constructor(
    private readonly context: ServiceContext,
    private readonly auth: AuthService
  ) {
    auth.setSessionResolver((keyHash) => this.resolve(keyHash))
  }

  /**
   * `POST /sessions`: a new, unauthorized session of the calling public
   * application. `person`: who acts through the application (the desktop
   * user), named in the log instead of it.
   */
  async create(actor: Actor, body: unknown, person?: LogActor): Promise<SessionCreated> {
    requireApplicationType(actor, 'public', 'create a session')
    parseOrThrow(createBody, body)
    const { keyring, clock, writes } = this.context
    const now = clock.now()
    const id = newId()
    const sessionKey = generateSecret(SESSION_KEY_PREFIX)
    const nonce = generateSecret('nonce')
    const expiresAt = now + SESSION_LIFETIME_MS
    const row = {
      id,
      tenant_id: actor.tenantId,
      application_id: actor.id,
      key_hash: hashSecret(keyring.secretHashKey, sessionKey),
      nonce_hash: hashSecret(keyring.secretHashKey, nonce),
      authorized_by: null,
      authorized_at: null,
      permissions: '[]',
      rules: '[]',
      expires_at: expiresAt,
      created_at: now
    }
    await writes.run(async (trx) => {
      await insertSession(trx, row)
      await recordLogs(trx, [
        logRow(person ?? actor, actor.tenantId, { entityType: 'session', entityId: id, operation: 'create', message: sessionMessage('Session created', actor, person) }, now)
      ])
    })
    return { session_key: sessionKey, nonce, expires_at: toIsoString(expiresAt) }
  }

  /**
   * `POST /sessions/authorize`: grants the session behind `nonce` its access.
   * A nonce works once (409 afterwards); an unknown or expired one is a 404.
   * `person` as for `create`.
   */
  async authorize(actor: Actor, body: unknown, person?: LogActor): Promise<void> {
    requireApplicationType(actor, 'private', 'authorize a session')
    const input = parseOrThrow(authorizeBody, body)
    requireSomeGrant(input)
    const { keyring, clock, writes } = this.context
    const now = clock.now()
    const expiresAt = input.expires_at === undefined ? undefined : parseIsoExpiresAt(input.expires_at, 'expires_at', new Date(now)).getTime()
    const nonceHash = hashSecret(keyring.secretHashKey, input.nonce)
    const permissions = normalisePermissions(input.permissions)
    const rules = normaliseRules(input.rules)
    requireHeldPermissions(actor, { permissions, rules })
    const grant = { permissions: JSON.stringify(permissions), rules: JSON.stringify(rules) }
    const sessionId = await writes.run(async (trx) => {
      const session = await findSessionByNonceHash(trx, actor.tenantId, nonceHash)
      if (!session || Number(session.expires_at) <= now) throw new NotFoundError('Session')
      if (session.authorized_at !== null) throw new ConflictError('This nonce has already been used.')
      const changed = await authorizeSession(trx, session.id, {
        ...grant,
        authorized_by: actor.id,
        authorized_at: now,
        expires_at: expiresAt ?? Number(session.expires_at)
      })
      if (changed !== 1) throw new ConflictError('This nonce has already been used.')
      await recordLogs(trx, [
        logRow(person ?? actor, actor.tenantId, { entityType: 'session', entityId: session.id, operation: 'authorize', message: sessionMessage('Session authorized', actor, person) }, now)
      ])
      return session.id
    })
    this.auth.evict(sessionId)
  }

  /** Deletes sessions past `expires_at` (the expiry job); returns how many. */
  async deleteExpiredSessions(now: number, limit: number): Promise<number> {
    const deleted = await this.context.writes.run(async (trx) => {
      const expired = await listExpiredSessions(trx, now, limit)
      await deleteSessions(
        trx,
        expired.map((session) => session.id)
      )
      await recordLogs(
        trx,
        expired.map((session) =>
          logRow(null, session.tenant_id, { entityType: 'session', entityId: session.id, operation: 'expire', message: 'Session expired' }, now)
        )
      )
      return expired
    })
    for (const session of deleted) this.auth.evict(session.id)
    return deleted.length
  }

  /** The actor of an authorized session; undefined for unknown or not yet authorized keys (401). */
  private async resolve(keyHash: string): Promise<CachedActor | undefined> {
    const row = await findSessionByKeyHash(this.context.reader, keyHash)
    if (!row || row.authorized_at === null) return undefined
    return {
      actor: {
        type: 'session',
        id: row.id,
        tenantId: row.tenant_id,
        applicationType: 'public',
        permissions: JSON.parse(row.permissions) as Permission[],
        rules: JSON.parse(row.rules) as AccessRule[]
      },
      expiresAt: Number(row.expires_at)
    }
  }
}
