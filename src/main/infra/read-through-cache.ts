/**
 * A bounded LRU of values read from the database (API-key actors, token rows),
 * safe against a read racing a change: every invalidation bumps a generation,
 * and a load that began before it is returned but not stored. Services
 * invalidate after their change commits. A file vault has one writer (the
 * vault is locked while open), so that keeps the cache exact. On a team vault
 * other instances write too: their changes arrive as notifications, entries
 * also expire after `ttlMs` (so a lost notification cannot keep a revoked key
 * working), and while the notifications are not heard the cache is bypassed.
 *
 * Concurrent misses of one key share one load (single flight): when a hot
 * entry expires under load, one read goes to the database instead of one per
 * waiting request. A load is joined only while no invalidation has happened
 * since it began, so a joiner never gets what a fresh load would not; callers
 * still check what the value says about time (expiry) against their own clock.
 */
import { LRUCache } from 'lru-cache'

export interface CacheOptions {
  max: number
  /** How long an entry may be served, in ms; none: until evicted. */
  ttlMs?: number
}

export class ReadThroughCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>> {
  private readonly entries: LRUCache<K, V>
  private generation = 0
  private bypassed = false
  /** Loads under way, with the generation each began in. */
  private readonly loading = new Map<K, { generation: number; value: Promise<V | undefined> }>()

  constructor(options: CacheOptions) {
    this.entries = new LRUCache<K, V>(options.ttlMs ? { max: options.max, ttl: options.ttlMs, updateAgeOnGet: false } : { max: options.max })
  }

  get(key: K): V | undefined {
    return this.entries.get(key)
  }

  /**
   * Runs `loader` and keeps what it returns, unless an invalidation happened meanwhile or the cache is bypassed.
   * A load of `key` already under way is joined instead, if nothing was invalidated since it began.
   */
  load(key: K, loader: () => Promise<V | undefined>): Promise<V | undefined> {
    const joined = this.loading.get(key)
    if (joined && joined.generation === this.generation && !this.bypassed) return joined.value
    const generation = this.generation
    const value = this.loadOnce(key, loader, generation)
    const flight = { generation, value }
    this.loading.set(key, flight)
    const land = () => {
      if (this.loading.get(key) === flight) this.loading.delete(key)
    }
    value.then(land, land)
    return value
  }

  private async loadOnce(key: K, loader: () => Promise<V | undefined>, generation: number): Promise<V | undefined> {
    const value = await loader()
    if (value !== undefined && generation === this.generation && !this.bypassed) this.entries.set(key, value)
    return value
  }

  delete(key: K): void {
    this.generation++
    this.entries.delete(key)
  }

  clear(): void {
    this.generation++
    this.entries.clear()
  }

  deleteWhere(predicate: (value: V) => boolean): void {
    this.generation++
    const doomed = [...this.entries.entries()].filter(([, value]) => predicate(value)).map(([key]) => key)
    for (const key of doomed) this.entries.delete(key)
  }

  /** Empties the cache and keeps nothing until `resume` (changes made elsewhere are not heard meanwhile). */
  bypass(): void {
    this.bypassed = true
    this.clear()
  }

  /** Caches again, from empty: what changed while bypassed is unknown. */
  resume(): void {
    this.clear()
    this.bypassed = false
  }
}
