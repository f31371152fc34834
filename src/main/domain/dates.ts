/** Token expiry parsing (spec "Token expiration") and ISO 8601 output. */
import { DateTime } from 'luxon'
import { ISO_TIME_SPAN } from '../../shared/contracts/common'
import { ValidationError } from './errors'

const FORMATS_HINT =
  'must be a date in one of the formats M/D/YYYY h:mm:ss AM|PM ±hh:mm (offset optional, UTC without it), M/D/YYYY (12 AM UTC) or ISO 8601'

// Parsed by hand because luxon's `h … a` format accepts hours 0 and 13–23 with AM/PM.
const US_DATE_TIME = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: (\d{1,2}):(\d{2}):(\d{2}) ([AP]M)(?: ([+-](?:0\d|1[0-4]):[0-5]\d))?)?$/i

/** ISO 8601; without an offset it is read as UTC, like the other formats. */
function parseIso(text: string): DateTime | undefined {
  const iso = DateTime.fromISO(text, { zone: 'utc', setZone: true })
  return iso.isValid ? iso : undefined
}

function parse(text: string): DateTime | undefined {
  const m = US_DATE_TIME.exec(text)
  if (!m) return parseIso(text)
  const [, month, day, year, hour12, minute, second, meridiem, offset] = m
  let hour = 0
  if (hour12 !== undefined) {
    const h = Number(hour12)
    if (h < 1 || h > 12) return undefined
    hour = (h % 12) + (meridiem.toUpperCase() === 'PM' ? 12 : 0)
  }
  const zone = offset ? `UTC${offset}` : 'utc'
  const dt = DateTime.fromObject(
    { year: Number(year), month: Number(month), day: Number(day), hour, minute: Number(minute ?? 0), second: Number(second ?? 0) },
    { zone }
  )
  return dt.isValid ? dt : undefined
}

/**
 * Parses an `expires_at` value: `M/D/YYYY h:mm:ss AM|PM ±hh:mm` (offset optional, UTC
 * without it), `M/D/YYYY` (12 AM UTC) or ISO 8601 (UTC when it has no offset).
 * @throws ValidationError naming `field` when unparseable or not strictly after `now`
 */
export function parseExpiresAt(value: unknown, field: string, now: Date): Date {
  return futureTime(typeof value === 'string' ? parse(value.trim()) : undefined, field, now, FORMATS_HINT)
}

/**
 * Parses an ISO 8601 time (UTC when it has no offset), for fields the spec
 * defines as ISO 8601 only, such as a session's `expires_at`.
 * @throws ValidationError naming `field` when unparseable or not strictly after `now`
 */
export function parseIsoExpiresAt(value: unknown, field: string, now: Date): Date {
  return futureTime(typeof value === 'string' ? parseIso(value.trim()) : undefined, field, now, 'must be an ISO 8601 date-time')
}


function futureTime(dt: DateTime | undefined, field: string, now: Date, formatHint: string): Date {
  if (!dt) throw ValidationError.field(field, formatHint)
  if (dt.toMillis() <= now.getTime()) throw ValidationError.field(field, 'must be in the future')
  // 12/31/9999 11:59 PM -14:00 is in the year 10000 in UTC, which responses could not show as a date-time.
  if (dt.toMillis() > ISO_TIME_SPAN.latest) throw ValidationError.field(field, 'must be no later than 9999-12-31T23:59:59Z')
  return dt.toJSDate()
}

/** ISO 8601 in UTC (`2030-01-02T03:04:05.000Z`) for an epoch-milliseconds time or a Date. */
export function toIsoString(ms: number | Date): string {
  return new Date(ms).toISOString()
}
