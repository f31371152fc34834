import { describe, expect, it, vi } from 'vitest'
import { newTimeOrderedId, randomBytes } from '../../src/main/crypto/random'

describe('randomness', () => {
  it('never hands out the same pooled bytes twice', () => {
    const seen = new Set<string>()
    // Well past one 64 KiB pool, so refills are crossed.
    for (let i = 0; i < 10_000; i++) seen.add(Buffer.from(randomBytes(24)).toString('hex'))
    expect(seen.size).toBe(10_000)
  })

  it('makes version-7 UUIDs that sort by their creation time', () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const ids: string[] = []
      for (let ms = 0; ms < 50; ms++) {
        vi.setSystemTime(Date.UTC(2026, 10, 26) + ms)
        ids.push(newTimeOrderedId())
      }
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect([...ids].sort()).toEqual(ids)
      expect(new Set(ids).size).toBe(ids.length)
    } finally {
      vi.useRealTimers()
    }
  })
})
