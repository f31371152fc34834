import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/main/domain/errors'
import { parseExpiresAt, toIsoString } from '../../src/main/domain/dates'

const NOW = new Date('2026-05-15T12:00:00Z')
const iso = (value: string) => parseExpiresAt(value, 'expires_at', NOW).toISOString()

function errorOf(value: unknown): Record<string, string[]> {
  try {
    parseExpiresAt(value, 'expires_at', NOW)
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError)
    return (err as ValidationError).errors!
  }
  throw new Error('expected a ValidationError')
}

describe('parseExpiresAt', () => {
  it('reads a date-time with an offset', () => {
    expect(iso('1/2/2030 1:02:03 PM +05:30')).toBe('2030-01-02T07:32:03.000Z')
    expect(iso('12/31/2030 11:59:59 PM -08:00')).toBe('2031-01-01T07:59:59.000Z')
  })

  it('reads a date-time without an offset as UTC', () => {
    expect(iso('1/2/2030 1:02:03 AM')).toBe('2030-01-02T01:02:03.000Z')
  })

  it('reads 12 AM as midnight and 12 PM as noon', () => {
    expect(iso('1/2/2030 12:00:00 AM')).toBe('2030-01-02T00:00:00.000Z')
    expect(iso('1/2/2030 12:30:00 PM')).toBe('2030-01-02T12:30:00.000Z')
    expect(iso('1/2/2030 12:00:00 am +00:00')).toBe('2030-01-02T00:00:00.000Z')
  })

  it('reads a short date as 12 AM UTC', () => {
    expect(iso('1/2/2030')).toBe('2030-01-02T00:00:00.000Z')
    expect(iso('01/02/2030')).toBe('2030-01-02T00:00:00.000Z')
  })

  it('reads ISO 8601 with an offset or Z, and without one as UTC', () => {
    expect(iso('2030-01-02T03:04:05+02:00')).toBe('2030-01-02T01:04:05.000Z')
    expect(iso('2030-01-02T03:04:05.250Z')).toBe('2030-01-02T03:04:05.250Z')
    expect(iso('2030-01-02T03:04:05')).toBe('2030-01-02T03:04:05.000Z')
    expect(iso('2030-01-02')).toBe('2030-01-02T00:00:00.000Z')
  })

  it('rejects hours outside 1 to 12 and impossible dates', () => {
    for (const value of ['1/2/2030 0:00:00 AM', '1/2/2030 13:00:00 PM', '2/30/2030', '13/1/2030', '1/2/2030 1:60:00 PM']) {
      expect(errorOf(value)).toHaveProperty('expires_at')
    }
  })

  it('rejects malformed values, listing the accepted formats', () => {
    for (const value of [20300102, null, '', 'tomorrow', '1/2/30', '1/2/2030 1:02 PM', '1/2/2030 1:02:03 PM +0530', '1/2/2030 1:02:03 PM +15:00']) {
      expect(errorOf(value).expires_at[0]).toContain('M/D/YYYY h:mm:ss AM|PM ±hh:mm')
    }
  })

  it('rejects a time in the past or exactly now', () => {
    expect(errorOf('5/14/2026')).toEqual({ expires_at: ['must be in the future'] })
    expect(errorOf('2026-05-15T12:00:00Z')).toEqual({ expires_at: ['must be in the future'] })
    expect(errorOf('5/15/2026 12:00:00 PM')).toEqual({ expires_at: ['must be in the future'] })
    expect(iso('5/15/2026 12:00:01 PM')).toBe('2026-05-15T12:00:01.000Z')
  })

  it('rejects a time past the year 9999 in UTC, which a response could not show as an ISO 8601 date-time', () => {
    expect(errorOf('12/31/9999 11:59:59 PM -14:00')).toEqual({ expires_at: ['must be no later than 9999-12-31T23:59:59Z'] })
    expect(errorOf('9999-12-31T23:59:59-00:01')).toEqual({ expires_at: ['must be no later than 9999-12-31T23:59:59Z'] })
    expect(iso('12/31/9999 11:59:59 PM +14:00')).toBe('9999-12-31T09:59:59.000Z')
  })

  it('compares in absolute time, whatever the offset', () => {
    // 1 PM at +02:00 is 11 AM UTC, an hour before NOW.
    expect(errorOf('5/15/2026 1:00:00 PM +02:00')).toEqual({ expires_at: ['must be in the future'] })
    expect(iso('5/15/2026 8:00:00 AM -05:00')).toBe('2026-05-15T13:00:00.000Z')
  })
})

describe('toIsoString', () => {
  it('formats epoch milliseconds and Dates as ISO 8601 in UTC', () => {
    expect(toIsoString(Date.UTC(2030, 0, 2, 3, 4, 5))).toBe('2030-01-02T03:04:05.000Z')
    expect(toIsoString(new Date('2030-01-02T03:04:05+02:00'))).toBe('2030-01-02T01:04:05.000Z')
  })
})
