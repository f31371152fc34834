/** Tokens and tokenize: create, list, update (merge patch), reveal, and the token object. */
import { z } from 'zod'
import { containerPath } from './access'
import { isTokenTypeName, REVEAL_REASON_MIN_VISIBLE, TOKEN_TYPE_NAMES, TOKENIZE_MAX_TOKENS, visibleCharacterCount } from '../token-rules'
import { checkWith, pageOf, pageQuery, queryInt, queryList, timestamp } from './common'
import { nameText, shownText, withoutInvisibleCharacters, withoutNul } from './fields'

/** Metadata: non-sensitive text values. */
export const tokenMetadata = z
  .record(
    withoutInvisibleCharacters(z.string().regex(/^[^"\\\u0000-\u001f]{1,100}$/, 'metadata keys are 1–100 characters without quotes, backslashes or control characters')),
    shownText(z.string().max(500, 'must be at most 500 characters'))
  )
  .refine((value) => Object.keys(value).length <= 50, 'at most 50 metadata keys')
  .meta({ description: 'Non-sensitive text values (at most 50 keys), stored in plaintext; a value holding the token’s secrets is refused: a card or account number (even grouped by spaces, dashes, dots or slashes), a CVC, or a generic token’s whole data or one of its strings' })

/** Data nested deeper than this is refused: sealing, fingerprints and expressions all recurse over it. */
const MAX_DATA_DEPTH = 64

function nestedWithin(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return true
  return levels > 0 && Object.values(value).every((item) => nestedWithin(item, levels - 1))
}

/** Token data: any JSON value, nested at most MAX_DATA_DEPTH levels; each type checks its own shape. */
export const tokenData = z
  .unknown()
  .refine((value) => value !== undefined, 'is required')
  .refine((value) => nestedWithin(value, MAX_DATA_DEPTH), `must not be nested more than ${MAX_DATA_DEPTH} levels deep`)
  .meta({
    description:
      'Any JSON value for `token` (its numbers finite, integers within ±(2^53−1): larger ones as strings); for `card` `{number, expiration_month?, expiration_year?, cvc?}` (13–19 digits passing Luhn, month 1–12, four-digit year, 3–4 digit cvc); for `bank` `{routing_number, account_number}` (9 digits with a valid ABA checksum, 1–17 digits)'
  })

const expression = withoutNul(z.string().max(2000))
const expiresAt = z.string().meta({ description: '`M/D/YYYY h:mm:ss AM|PM ±hh:mm` (UTC without an offset), `M/D/YYYY` (midnight UTC) or ISO 8601; must be in the future' })

/** `POST /tokens`, and each token request inside `POST /tokenize`. */
export const createTokenBody = z
  .strictObject({
    id: withoutInvisibleCharacters(z.string().min(1).max(2000)).optional().meta({ description: 'A literal id or an expression (`{{ … }}`); 3–400 characters after rendering, without `# / \\ + ? [ ] | & = % < > { } ^`, control characters or invisible formatting characters (Unicode category Cf: bidi overrides, zero-width characters). Default: a UUID' }),
    type: z
      .string()
      .refine(isTokenTypeName, { message: `must be one of: ${TOKEN_TYPE_NAMES.join(', ')}` })
      .meta({ enum: [...TOKEN_TYPE_NAMES], description: 'Decides how `data` is validated and the default containers, fingerprint and mask' }),
    data: tokenData,
    mask: z.unknown().optional().meta({ description: 'A mask expression, or an object or array of them, evaluated on read under the `mask` transform. Default: by type' }),
    containers: z.array(containerPath).min(1).max(20).optional().meta({ description: 'Default: `/general/high/`, `/pci/high/` or `/bank/high/` by type' }),
    metadata: tokenMetadata.optional(),
    search_indexes: z.array(expression).max(20).optional(),
    fingerprint_expression: expression.optional().meta({ description: 'Default: `{{ data | stringify }}` (token), `{{ data.number }}` (card)' }),
    deduplicate_token: z.boolean().optional().meta({ description: 'Return the existing token of the same type and fingerprint (status 200) instead of creating one' }),
    expires_at: expiresAt.optional()
  })
  .meta({ id: 'CreateTokenRequest' })

export type CreateTokenInput = z.infer<typeof createTokenBody>

/** `PATCH /tokens/{id}`: `data`, `mask` and `metadata` merge (RFC 7386, `null` removes a key); the rest replace. */
export const updateTokenBody = z
  .strictObject({
    data: tokenData.optional(),
    mask: z.unknown().optional(),
    metadata: z.record(z.string(), withoutNul(z.string().max(500)).nullable()).nullable().optional(),
    containers: z.array(containerPath).min(1).max(20).optional(),
    search_indexes: z.array(expression).max(20).optional(),
    fingerprint_expression: expression.optional(),
    deduplicate_token: z.boolean().optional(),
    expires_at: expiresAt.nullable().optional()
  })
  .meta({ id: 'TokenMergePatch' })

export type UpdateTokenInput = z.infer<typeof updateTokenBody>

/**
 * Metadata filters: exact key → value (case-insensitive), checked like `tokenMetadata`. The
 * object is passed on with its own keys, `__proto__` included: z.record would drop that key,
 * and the list would then match tokens that do not hold it.
 */
const metadataFilters = z
  .custom<Record<string, string>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'must map metadata keys to values')
  .transform((filters, ctx) => {
    checkWith(tokenMetadata, filters, ctx)
    return Object.fromEntries(Object.entries(filters)) as Record<string, string>
  })

/** `GET /tokens` as the service takes it (the REST query string: `listTokensSearch`). */
export const listTokensQuery = z.strictObject({
  id: queryList(withoutNul(z.string().max(400))).meta({ description: 'Only these token ids (repeatable)' }),
  type: queryList(withoutNul(z.string().max(50))).meta({ description: 'Only these token types (repeatable)' }),
  metadata: metadataFilters.optional().transform((filters) => filters ?? {}),
  ...pageQuery()
})

/** Gathers `metadata.<key>` query parameters into `metadata`; a repeated key is ignored (spec). */
function gatherMetadataParameters(query: unknown, ctx: z.core.$RefinementCtx): unknown {
  if (typeof query !== 'object' || query === null) return query
  // A bare `metadata` parameter is not one of them.
  if (Object.hasOwn(query, 'metadata')) ctx.issues.push({ code: 'custom', path: ['metadata'], message: 'is not a known field', input: query })
  const entries = Object.entries(query).filter(([name]) => name !== 'metadata')
  // Built with `Object.fromEntries`, so every key is an own property, `__proto__` included.
  const metadata = Object.fromEntries(
    entries.flatMap(([name, value]) => (name.startsWith('metadata.') && typeof value === 'string' ? [[name.slice('metadata.'.length), value]] : []))
  )
  return { ...Object.fromEntries(entries.filter(([name]) => !name.startsWith('metadata.'))), metadata }
}

/** `GET /tokens`'s query string: `listTokensQuery` with the metadata filters as `metadata.<key>=<value>` parameters. */
export const listTokensSearch = z.preprocess(gatherMetadataParameters, listTokensQuery)

export type ListTokensQuery = z.infer<typeof listTokensQuery>

/** The v2 lists' page size: 1–100, 20 by default (Basis Theory's). */
const V2_DEFAULT_SIZE = 20
const V2_MAX_SIZE = 100

/** Where a v2 list resumes: the previous page's `pagination.next`, as it was given. */
const cursor = withoutNul(z.string().min(1).max(2000))
const CURSOR_DESCRIPTION = 'The previous page’s `pagination.next`, as it was given; absent for the first page'

/** `GET /v2/tokens` as the service takes it (the REST query string: `listTokensV2Search`). Every filter given must hold. */
export const listTokensV2Query = z.strictObject({
  type: withoutNul(z.string().max(50)).optional().meta({ description: 'Only tokens of this type' }),
  container: containerPath.optional().meta({ description: 'Only tokens in this container or below it' }),
  fingerprint: withoutNul(z.string().max(100)).optional().meta({ description: 'Only tokens with this fingerprint' }),
  metadata: metadataFilters.optional().transform((filters) => filters ?? {}),
  start: cursor.optional().meta({ description: CURSOR_DESCRIPTION }),
  size: queryInt(V2_DEFAULT_SIZE, 1, V2_MAX_SIZE).meta({ description: 'Tokens per page' })
})

export type ListTokensV2Query = z.infer<typeof listTokensV2Query>

/**
 * Gathers the metadata filters of `GET /v2/tokens`: `metadata` as JSON object text (as the SDK sends
 * it) and `metadata.<key>` parameters (as on `GET /tokens`); a key given both ways takes the parameter.
 */
function gatherV2Metadata(query: unknown, ctx: z.core.$RefinementCtx): unknown {
  if (typeof query !== 'object' || query === null) return query
  const entries = Object.entries(query)
  let metadata: unknown = {}
  const text = (query as Record<string, unknown>).metadata
  if (Object.hasOwn(query, 'metadata')) {
    try {
      metadata = typeof text === 'string' ? JSON.parse(text) : undefined
    } catch {
      metadata = undefined
    }
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
      ctx.issues.push({ code: 'custom', path: ['metadata'], message: 'must be a JSON object of metadata keys and values', input: query })
      return z.NEVER
    }
  }
  const parameters = entries.flatMap(([name, value]) => (name.startsWith('metadata.') && typeof value === 'string' ? [[name.slice('metadata.'.length), value]] : []))
  return {
    ...Object.fromEntries(entries.filter(([name]) => name !== 'metadata' && !name.startsWith('metadata.'))),
    // Built with `Object.fromEntries`, so every key is an own property, `__proto__` included.
    metadata: Object.fromEntries([...Object.entries(metadata as object), ...parameters])
  }
}

/** `GET /v2/tokens`'s query string: `listTokensV2Query` with the metadata filters as JSON text or `metadata.<key>=<value>` parameters. */
export const listTokensV2Search = z.preprocess(gatherV2Metadata, listTokensV2Query)

/** `POST /v2/tokens/search`. */
export const searchTokensV2Body = z
  .strictObject({
    query: withoutNul(z.string().max(10_000)).meta({
      description:
        'One `field:value` term, or two joined by `AND` where one is a `container` term. Fields: `type`, `fingerprint`, `container` (the container and those below it), `metadata.<key>` (exact, case-sensitive), `data` (exactly one of the token’s search index values). Values may be quoted with double quotes (`\\"` and `\\\\` inside quotes).'
    }),
    start: cursor.optional().meta({ description: CURSOR_DESCRIPTION }),
    size: z.number().int('must be a whole number').min(1, 'must be at least 1').max(V2_MAX_SIZE, `must be at most ${V2_MAX_SIZE}`).optional().transform((size) => size ?? V2_DEFAULT_SIZE).meta({ description: 'Tokens per page (default 20)' })
  })
  .meta({ id: 'SearchTokensV2Request' })

export type SearchTokensV2Body = z.infer<typeof searchTokensV2Body>

/**
 * Desktop only: why a member reveals a token's plaintext, written into the audit
 * message on one line: trimmed, at most 200 characters, no control characters
 * (C0, DEL, C1: a line break would forge another line), no invisible formatting
 * characters (bidi overrides, zero-width characters, U+2028/2029), and at least
 * 3 characters people can see.
 */
export const revealReason = nameText(z.string().trim().max(200)).refine(
  (value) => visibleCharacterCount(value) >= REVEAL_REASON_MIN_VISIBLE,
  `give a reason of at least ${REVEAL_REASON_MIN_VISIBLE} visible characters`
)

/** The token object, shaped by the caller's transform. */
export const token = z
  .strictObject({
    id: z.string(),
    tenant_id: z.uuid(),
    type: z.string().meta({ enum: [...TOKEN_TYPE_NAMES] }),
    data: z.unknown().optional().meta({ description: 'Present under the `mask` (when the token has a mask) and `reveal` transforms' }),
    mask: z.unknown().optional().meta({ description: 'The mask expression; in single-token responses of a card, the masked values' }),
    fingerprint: z.string().meta({ description: 'Identifies the contents: equal for tokens of one type whose fingerprint expressions render alike' }),
    containers: z.array(z.string()),
    metadata: z.record(z.string(), z.string()).optional(),
    created_by: z.uuid().optional().meta({ description: 'The application, session or member that created the token' }),
    created_at: timestamp.optional(),
    modified_by: z.uuid().optional(),
    modified_at: timestamp.optional(),
    search_indexes: z.array(z.string()).optional(),
    fingerprint_expression: z.string().optional(),
    expires_at: timestamp.optional().meta({ description: 'When the token is deleted' })
  })
  .meta({ id: 'Token' })

export const tokenPage = pageOf(token, 'TokenPage')

/** One page of a v2 list: `next` leads to the following page and is absent on the last; a short or empty page may have one. */
export const tokenCursorPage = z
  .strictObject({
    pagination: z
      .strictObject({
        page_size: z.number().int().min(1).meta({ description: 'The page size asked for' }),
        next: z.string().optional().meta({ description: 'Pass as `start` for the next page; absent on the last page. A short or empty page may have one: follow it' })
      })
      .meta({ id: 'CursorPagination' }),
    data: z.array(token)
  })
  .meta({ id: 'TokenCursorPage' })

export type TokenCursorPage = z.infer<typeof tokenCursorPage>

type TokenizeValue = string | number | boolean | null | CreateTokenInput | TokenizeValue[] | { [key: string]: TokenizeValue }

/** `POST /tokenize`: any JSON shape; documentation only, each token request is checked with `createTokenBody`. */
export const tokenizeBody: z.ZodType<TokenizeValue> = z
  .union([
    createTokenBody,
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(z.lazy(() => tokenizeBody)),
    z.record(z.string(), z.lazy(() => tokenizeBody))
  ])
  .meta({
    id: 'TokenizeRequest',
    description: `Any JSON value. A plain value becomes a \`token\` token; an object with \`type\` and \`data\` is a token request; other objects and arrays nest. At most ${TOKENIZE_MAX_TOKENS.toLocaleString('en')} tokens (plain values and token requests together).`
  })

type TokenizeResultValue = string | null | z.infer<typeof token> | TokenizeResultValue[] | { [key: string]: TokenizeResultValue }

/** The response of `POST /tokenize`: the request's shape with each plain value replaced by a token id and each token request by a token. */
export const tokenizeResult: z.ZodType<TokenizeResultValue> = z
  .union([z.string(), z.null(), token, z.array(z.lazy(() => tokenizeResult)), z.record(z.string(), z.lazy(() => tokenizeResult))])
  .meta({ id: 'TokenizeResult', description: 'The request with each plain value replaced by its token id and each token request by the created token' })

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/** Any JSON value (documentation only: `POST /detokenize` walks whatever it is sent). */
const anyJson = (id: string, description: string): z.ZodType<JsonValue> => {
  const value: z.ZodType<JsonValue> = z
    .union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.lazy(() => value)), z.record(z.string(), z.lazy(() => value))])
    .meta({ id, description })
  return value
}

/** `POST /detokenize`: any JSON value whose strings may hold detokenization expressions. */
export const detokenizeBody = anyJson(
  'DetokenizeRequest',
  'Any JSON value. In its strings, `{{ ID | filters }}` stands for the data of token ID and `{{ token: ID | filters }}` for the token object; filters are optional.'
)

/** The response of `POST /detokenize`. */
export const detokenizeResult = anyJson(
  'DetokenizeResult',
  'The request with each expression replaced: a string that is exactly one expression takes its value with its JSON type; other strings have the values written in (objects as JSON, null as nothing).'
)
