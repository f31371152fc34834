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

/** Epoch ms of an ISO 8601 date or date-time whose time in UTC still has a four-digit year; NaN otherwise. */
export function isoDateToEpochMs(value: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN
  return ms >= ISO_TIME_SPAN.earliest && ms <= ISO_TIME_SPAN.latest ? ms : Number.NaN
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
