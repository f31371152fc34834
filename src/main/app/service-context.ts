/** What every service is built with: readers, the single writer queue, keys, time and logs. */
import type { Reader } from '../storage/connections'
import type { WriteQueue } from '../storage/write-queue'
import type { Logger } from '../infra/logger'
import type { Keyring } from './keyring'
import type { WebhookEvents } from './webhook-events'

/** Injected time source so expiry logic is testable without sleeping. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export interface ServiceContext {
  reader: Reader
  writes: WriteQueue
  keyring: Keyring
  clock: Clock
  logger: Logger
  cvcRetentionMs: number
  /**
   * How long the in-memory caches may serve an entry: a team vault's other
   * instances write too, so entries expire (TEAM_CACHE_TTL_MS); a file vault's
   * caches are exact and this is undefined.
   */
  cacheTtlMs?: number
  /** Where changes emit their webhook events (in their own transaction); none: no events (unit tests). */
  webhookEvents?: WebhookEvents
}

/**
 * On a team vault, the longest a cache may serve an entry: the backstop when a
 * change notification from another instance is lost (a revoked key is refused
 * at most this long after its revocation).
 */
export const TEAM_CACHE_TTL_MS = 1000
