/**
 * A bounded LRU of values read from the database (API-key actors, token rows),
 * safe against a read racing a change: every invalidation bumps a generation,
 * and a load that began before it is returned but not stored. Services
 * invalidate after their change commits; this process is the vault's only
 * writer (the vault is locked while open), so that keeps the cache exact.
 */
import { LRUCache } from 'lru-cache'

export class ReadThroughCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>> {
  private readonly entries: LRUCache<K, V>
  private generation = 0

  constructor(max: number) {
    this.entries = new LRUCache<K, V>({ max })
  }

  get(key: K): V | undefined {
    return this.entries.get(key)
  }

  /** Runs `loader` and keeps what it returns, unless an invalidation happened meanwhile. */
  async load(key: K, loader: () => Promise<V | undefined>): Promise<V | undefined> {
    const generation = this.generation
    const value = await loader()
    if (value !== undefined && generation === this.generation) this.entries.set(key, value)
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
}
