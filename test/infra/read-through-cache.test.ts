/**
 * The read-through cache: a load racing an invalidation is not kept, and a
 * bypassed cache (a team vault instance that cannot hear the others' changes)
 * keeps nothing until it resumes, then starts from empty. Concurrent misses
 * share one load, unless an invalidation came between them.
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

  it('runs one load for concurrent misses of a key, and a fresh one once it has landed', async () => {
    const cache = new ReadThroughCache<string, string>({ max: 10, ttlMs: 60_000 })
    let loads = 0
    let finish: (value: string) => void = () => undefined
    const loader = () => {
      loads++
      return new Promise<string>((resolve) => (finish = resolve))
    }
    const first = cache.load('a', loader)
    const second = cache.load('a', loader)
    const other = cache.load('b', async () => 'B')
    expect(loads).toBe(1)
    finish('A')
    expect(await Promise.all([first, second, other])).toEqual(['A', 'A', 'B'])
    cache.delete('a')
    const third = cache.load('a', loader)
    expect(loads).toBe(2)
    finish('A2')
    expect(await third).toBe('A2')
  })

  it('does not join a load that began before an invalidation, nor share a failed load with later misses', async () => {
    const cache = new ReadThroughCache<string, string>({ max: 10, ttlMs: 60_000 })
    const finishers: ((value: string) => void)[] = []
    const loader = () => new Promise<string>((resolve) => finishers.push(resolve))
    const before = cache.load('a', loader)
    cache.delete('a')
    const after = cache.load('a', loader)
    const joiningAfter = cache.load('a', loader)
    expect(finishers).toHaveLength(2)
    finishers[0]('stale A')
    finishers[1]('fresh A')
    expect(await before).toBe('stale A')
    expect(await after).toBe('fresh A')
    expect(await joiningAfter).toBe('fresh A')
    expect(cache.get('a')).toBe('fresh A')

    const failing = cache.load('f', async () => Promise.reject(new Error('down')))
    await expect(failing).rejects.toThrow('down')
    expect(await cache.load('f', async () => 'F')).toBe('F')
  })

  it('does not share loads while bypassed', async () => {
    const cache = new ReadThroughCache<string, string>({ max: 10 })
    cache.bypass()
    let loads = 0
    const loader = async () => `A${++loads}`
    await Promise.all([cache.load('a', loader), cache.load('a', loader)])
    expect(loads).toBe(2)
  })
})
