/**
 * The read-through cache: a load racing an invalidation is not kept, and a
 * bypassed cache (a team vault instance that cannot hear the others' changes)
 * keeps nothing until it resumes, then starts from empty.
 */
import { describe, expect, it } from 'vitest'
import { ReadThroughCache } from '../../src/main/infra/read-through-cache'

describe('ReadThroughCache', () => {
  it('keeps a loaded value, but not one whose load raced an invalidation', async () => {
    const cache = new ReadThroughCache<string, string>({ max: 10 })
    await cache.load('a', async () => 'A')
    expect(cache.get('a')).toBe('A')
    let finish: (value: string) => void = () => undefined
    const racing = cache.load('b', () => new Promise<string>((resolve) => (finish = resolve)))
    cache.delete('b')
    finish('stale B')
    expect(await racing).toBe('stale B')
    expect(cache.get('b')).toBeUndefined()
  })

  it('keeps nothing while bypassed, and resumes from empty', async () => {
    const cache = new ReadThroughCache<string, string>({ max: 10, ttlMs: 60_000 })
    await cache.load('a', async () => 'A')
    cache.bypass()
    expect(cache.get('a')).toBeUndefined()
    expect(await cache.load('a', async () => 'A2')).toBe('A2')
    expect(cache.get('a')).toBeUndefined()

    let finish: (value: string) => void = () => undefined
    const loadingWhileBypassed = cache.load('c', () => new Promise<string>((resolve) => (finish = resolve)))
    cache.resume()
    finish('C from before')
    await loadingWhileBypassed
    expect(cache.get('c')).toBeUndefined()
    await cache.load('a', async () => 'A3')
    expect(cache.get('a')).toBe('A3')
  })
})
