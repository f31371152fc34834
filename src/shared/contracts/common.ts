/**
 * Building blocks of the contracts: query numbers and lists (as query-string
 * text from REST, or as the desktop's typed values), pagination and the
 * problem document every error answers with.
 */
import { z } from 'zod'
import { COUNTED_ITEMS_LIMIT } from '../pagination'

type JsonSchema = Record<string, unknown>

/**
 * A rendering hint for the OpenAPI generator: the schema is documented as
 * `replacement` (plus its description) instead of what zod derives, for
 * query-string values whose wire form (text) differs from their meaning.
 */
function documentedAs(replacement: (rendered: JsonSchema) => JsonSchema) {
  return {
    override: ({ jsonSchema }: { jsonSchema: JsonSchema }) => {
      const { description } = jsonSchema
      const documented = replacement(jsonSchema)
      for (const key of Object.keys(jsonSchema)) delete jsonSchema[key]
      Object.assign(jsonSchema, description === undefined ? {} : { description }, documented)
    }
  }
}

/** A query integer (`page`, `size`) within bounds, as text (`?page=2`) or a number; `defaultValue` when absent. */
export function queryInt(defaultValue: number, min: number, max: number) {
  return z
    .union([z.string().regex(/^\d+$/).transform(Number), z.number().int()], { error: 'must be a whole number' })
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .transform((value) => value ?? defaultValue)
    .meta(documentedAs(() => ({ type: 'integer', minimum: min, maximum: max, default: defaultValue })))
}

/**
 * A UUID filter value, as stored: lower case. SQLite compares the stored text,
 * PostgreSQL's uuid columns ignore case: folded here, both engines find alike.
 */
export const uuidFilter = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID')
  .transform((id) => id.toLowerCase())
  .meta({ format: 'uuid' })

/**
 * The most values a repeatable filter (`?id=a&id=b`) takes: the largest page size.
 * Each value is a statement parameter, and SQLite takes at most 32,766 a statement.
 */
export const QUERY_LIST_MAX_VALUES = 100

/** A query parameter that may be given once or repeated (`?id=a&id=b`), at most QUERY_LIST_MAX_VALUES times; always an array. */
export function queryList<T extends z.ZodType>(item: T) {
  return z
    .union([item, z.array(item)])
    .optional()
    .transform((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]))
    .refine((values) => values.length <= QUERY_LIST_MAX_VALUES, `must list at most ${QUERY_LIST_MAX_VALUES} values`)
    .meta(documentedAs((rendered) => ({ ...(rendered.anyOf as JsonSchema[])[1], maxItems: QUERY_LIST_MAX_VALUES })))
}

/**
 * Checks `value` with `schema` inside another schema's transform, reporting its
 * issues (paths and messages as they are) as that schema's own; the parsed
 * value, or `z.NEVER` when it fails. For a schema chosen by the input itself.
 */
export function checkWith<T>(schema: z.ZodType<T>, value: unknown, ctx: z.core.$RefinementCtx): T {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  for (const issue of result.error.issues) ctx.issues.push({ ...issue, input: value } as z.core.$ZodRawIssue)
  return z.NEVER
}

/** `page` ≥ 1 (default 1) and `size` 1–`maxSize` (default 20), as query fields. */
export function pageQuery(maxSize = 100) {
  return { page: queryInt(1, 1, 1_000_000).meta({ description: 'Page number' }), size: queryInt(20, 1, maxSize).meta({ description: 'Items per page' }) }
}

export const pagination = z
  .strictObject({
    total_items: z.number().int().min(0).meta({ description: `Items across all pages that the caller may see. Filtered token and log lists count up to ${COUNTED_ITEMS_LIMIT.toLocaleString('en-US')}: ${(COUNTED_ITEMS_LIMIT + 1).toLocaleString('en-US')} means more` }),
    page_number: z.number().int().min(1),
    page_size: z.number().int().min(1),
    total_pages: z.number().int().min(0)
  })
  .meta({ id: 'Pagination' })

/** One page of a list: `{ pagination, data }`, newest first. */
export function pageOf<T extends z.ZodType>(item: T, id: string) {
  return z.strictObject({ pagination, data: z.array(item) }).meta({ id })
}

/** The span of times an ISO 8601 date-time with a four-digit year can state in UTC, as every answer gives them (epoch ms). */
export const ISO_TIME_SPAN = { earliest: Date.parse('0000-01-01T00:00:00.000Z'), latest: Date.parse('9999-12-31T23:59:59.999Z') }

/**
 * `YYYY-MM-DD`, or that date with `THH:MM`, optional `:SS` and fraction, and a
 * zone: `Z` or an offset `±HH:MM` (at most 14 hours, as real offsets are).
 */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/

/** Why a text is not an ISO 8601 date the filters take (see readIsoDate). */
export type IsoDateProblem = 'format' | 'no_time_zone' | 'no_such_time' | 'out_of_range'

/** What the problems other than `format` and `out_of_range` are answered with (completing "<field> …"). */
export const ISO_DATE_MESSAGES = {
  no_time_zone: 'must state its time zone: add Z (UTC) or an offset such as +01:00 after the time, as in 2026-11-01T12:00:00Z',
  no_such_time: 'names a day or time that does not exist (such as February 30, month 13 or hour 24)'
} as const

const MINUTE = 60_000

/**
 * Reads an ISO 8601 date (`2026-11-01`: midnight UTC) or date-time with `Z` or an
 * explicit offset (`2026-11-01T12:00:00Z`, `…+01:00`) as epoch ms, strictly: a
 * date-time without a time zone is refused rather than read in the process's
 * local time, and so is a day or time that does not exist (February 30, month 13,
 * hour 24, second 60) rather than rolled over. The time in UTC must keep a
 * four-digit year (ISO_TIME_SPAN).
 */
export function readIsoDate(value: string): { ms: number } | { problem: IsoDateProblem } {
  const match = ISO_DATE.exec(value)
  if (!match) return { problem: 'format' }
  const [, year, month, day, hour, minute, second = '0', fraction = '', zone] = match
  if (hour !== undefined && zone === undefined) return { problem: 'no_time_zone' }
  const date = new Date(0)
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day))
  if (date.getUTCFullYear() !== Number(year) || date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) return { problem: 'no_such_time' }
  const [h, m, sec] = [Number(hour ?? 0), Number(minute ?? 0), Number(second)]
  if (h > 23 || m > 59 || sec > 59) return { problem: 'no_such_time' }
  let offsetMinutes = 0
  if (zone !== undefined && zone !== 'Z') {
    const [offsetHours, offsetMins] = [Number(zone.slice(1, 3)), Number(zone.slice(4, 6))]
    if (offsetMins > 59 || offsetHours * 60 + offsetMins > 14 * 60) return { problem: 'no_such_time' }
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins)
  }
  const ms = date.getTime() + (h * 60 + m) * MINUTE + sec * 1000 + Number(fraction.slice(0, 3).padEnd(3, '0')) - offsetMinutes * MINUTE
  return ms >= ISO_TIME_SPAN.earliest && ms <= ISO_TIME_SPAN.latest ? { ms } : { problem: 'out_of_range' }
}

/** Epoch ms of an ISO 8601 date or date-time as readIsoDate reads it; NaN otherwise. */
export function isoDateToEpochMs(value: string): number {
  const read = readIsoDate(value)
  return 'ms' in read ? read.ms : Number.NaN
}

/**
 * A text field or option holding an ISO 8601 date or date-time (readIsoDate), as epoch ms:
 * `general` answers a text of another form or out of range; a date-time without a time zone
 * and a day or time that does not exist are named as such, after `prefix`.
 */
export function isoDateText(general: string, prefix = '') {
  return z.string().transform((value, ctx) => {
    const read = readIsoDate(value)
    if ('ms' in read) return read.ms
    const message = read.problem === 'format' || read.problem === 'out_of_range' ? general : `${prefix}${ISO_DATE_MESSAGES[read.problem]}`
    ctx.issues.push({ code: 'custom', message, input: value })
    return z.NEVER
  })
}

/** A timestamp in responses: ISO 8601 (the service answers in UTC). */
export const timestamp = z.iso.datetime({ offset: true })

/** Field path → messages, e.g. `{ "[3].data.number": ["fails the Luhn check"] }`. */
const fieldErrors = z.record(z.string(), z.array(z.string()))

/** RFC 7807 problem document: the body of every error response. */
export const problem = z
  .strictObject({
    type: z.string().meta({ description: '`about:blank` or a URI naming the problem kind' }),
    title: z.string().meta({ description: 'The HTTP status text' }),
    status: z.number().int().min(400).max(599),
    detail: z.string().meta({ description: 'What went wrong, for people; never contains submitted values' }),
    code: z
      .string()
      .optional()
      .meta({
        description:
          'Machine-readable: `validation_failed`, `malformed_json`, `unauthenticated`, `forbidden`, `not_found`, `route_not_found`, `method_not_allowed`, `conflict`, `invitation_link_invalid`, `invitation_expired`, `payload_too_large`, `unsupported_media_type`, `business_rule`, `host_not_allowed`, `internal_error`'
      }),
    errors: fieldErrors.optional().meta({ description: 'On 400s: the path of each bad field and its messages, e.g. `rules[0].priority`; `(body)` is the whole body' })
  })
  .meta({ id: 'Problem' })

export const health = z.strictObject({ status: z.literal('ok') }).meta({ id: 'Health' })
