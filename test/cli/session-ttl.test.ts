import { describe, expect, it } from 'vitest'
import { readEnvironment } from '../../src/main/cli/environment'

const ttl = (value: string | undefined) => readEnvironment(['TESSERA_SESSION_MAX_TTL'], { TESSERA_SESSION_MAX_TTL: value }).TESSERA_SESSION_MAX_TTL

describe('TESSERA_SESSION_MAX_TTL', () => {
  it('is unset by default, so the 24-hour cap applies', () => {
    expect(ttl(undefined)).toBeUndefined()
    expect(ttl('')).toBeUndefined()
  })

  it('takes seconds, or a number of s, m, h or d', () => {
    expect(ttl('3600')).toBe(3_600_000)
    expect(ttl('90s')).toBe(90_000)
    expect(ttl('90m')).toBe(5_400_000)
    expect(ttl('24h')).toBe(86_400_000)
    expect(ttl('7d')).toBe(604_800_000)
  })

  it('accepts 1 minute to 30 days and refuses anything else, naming the variable', () => {
    expect(ttl('1m')).toBe(60_000)
    expect(ttl('30d')).toBe(2_592_000_000)
    for (const bad of ['59', '59s', '31d', '721h', '0', '-1h', '1.5h', '24 h', '24H', 'forever', '1w', '99999999999']) {
      expect(() => ttl(bad), bad).toThrow(/^TESSERA_SESSION_MAX_TTL must be a duration from 1 minute to 30 days/)
    }
  })
})
