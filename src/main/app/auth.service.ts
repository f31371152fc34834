/**
 * Turns an SVC-API-KEY into an Actor. Keys are stored and looked up only by
 * keyed hash. The actors of keys found in the vault are cached in memory (never
 * on disk) under the key itself, so a request with a known key costs a map
 * lookup instead of a hash; every service that changes an application or
 * session evicts its entries, so a regenerated or deleted key stops working at
 * once (on a team vault, on every instance: see app/change-follower.ts). Expiry is checked on every call against the injected clock.
 */
import { hashSecret } from '../crypto/secrets'
import { findApplicationByKeyHash, type ApplicationRecord } from '../storage/repositories/applications.repository'
import type { Actor } from '../domain/actor'
import { UnauthenticatedError } from '../domain/errors'
import { ReadThroughCache } from '../infra/read-through-cache'
import type { ServiceContext } from './service-context'

/** Session keys carry this prefix so they are told apart from application keys without a second lookup. */
export const SESSION_KEY_PREFIX = 'key_sess'

/** Resolves a session key hash to its actor; provided by the sessions service. */
export type SessionResolver = (keyHash: string, now: number) => Promise<CachedActor | undefined>

export interface CachedActor {
  actor: Actor
  /** Epoch ms after which the credential is rejected; null for never. */
  expiresAt: number | null
}

const MAX_CACHED = 10_000

/** The actor an application's key stands for, from its row. */
export function applicationActor(row: ApplicationRecord): Actor {
  return {
    type: 'application',
    id: row.id,
    tenantId: row.tenant_id,
    applicationType: row.type,
    permissions: row.permissions,
    rules: row.rules
  }
}

/** The type of a presented key (`key_private`), or "unrecognised": never any of its random part. */
export function keyType(key: string): string {
  return /^(key_(?:private|public|management|sess))_/.exec(key)?.[1] ?? 'unrecognised'
}

/** The 401 of a key that is unknown, expired or malformed; `type` as `keyType` names it. */
export function invalidKeyOfType(type: string, why: 'unknown' | 'expired' | 'malformed'): UnauthenticatedError {
  return new UnauthenticatedError('The API key is invalid or has expired.', `${why} key (type ${type})`)
}

function invalidKey(key: string, why: 'unknown' | 'expired' | 'malformed'): UnauthenticatedError {
  return invalidKeyOfType(keyType(key), why)
}

function actorUnlessExpired(key: string, entry: CachedActor | undefined, now: number): Actor {
  if (!entry) throw invalidKey(key, 'unknown')
  if (entry.expiresAt !== null && entry.expiresAt <= now) throw invalidKey(key, 'expired')
  return entry.actor
}

export class AuthService {
  private readonly cache: ReadThroughCache<string, CachedActor>
  private sessionResolver: SessionResolver = async () => undefined

  constructor(private readonly context: ServiceContext) {
    this.cache = new ReadThroughCache({ max: MAX_CACHED, ttlMs: context.cacheTtlMs })
  }

  /** Installed by the sessions service. */
  setSessionResolver(resolver: SessionResolver): void {
    this.sessionResolver = resolver
  }

  /**
   * The actor behind a key; 401 when the key is missing, unknown or expired.
   * Synchronous for a cached key (every request after a key's first), sparing
   * every request a promise hop.
   */
  authenticate(key: string | undefined): Actor | Promise<Actor> {
    if (!key) throw new UnauthenticatedError('The SVC-API-KEY header is required.', 'missing SVC-API-KEY header')
    if (key.length > 200) throw invalidKey(key, 'malformed')
    const now = this.context.clock.now()
    const cached = this.cache.get(key)
    if (cached) return actorUnlessExpired(key, cached, now)
    return this.cache.load(key, () => this.load(key, now)).then((loaded) => actorUnlessExpired(key, loaded, now))
  }

  /** Forgets cached credentials of an application or session (after update, regenerate, delete, authorize, revoke). */
  evict(...actorIds: string[]): void {
    const ids = new Set(actorIds)
    this.cache.deleteWhere((entry) => ids.has(entry.actor.id))
  }

  /** Forgets every cached credential. */
  evictAll(): void {
    this.cache.clear()
  }

  /** While changes made by other instances are not heard: cache nothing (see ReadThroughCache.bypass). */
  bypassCache(bypassed: boolean): void {
    if (bypassed) this.cache.bypass()
    else this.cache.resume()
  }

  private load(key: string, now: number): Promise<CachedActor | undefined> {
    const keyHash = hashSecret(this.context.keyring.secretHashKey, key)
    return key.startsWith(SESSION_KEY_PREFIX) ? this.sessionResolver(keyHash, now) : this.loadApplication(keyHash)
  }

  private async loadApplication(keyHash: string): Promise<CachedActor | undefined> {
    const row = await findApplicationByKeyHash(this.context.reader, keyHash)
    if (!row) return undefined
    return {
      actor: { ...applicationActor(row), keyId: row.key_id },
      expiresAt: row.expires_at === null ? null : Number(row.expires_at)
    }
  }
}
