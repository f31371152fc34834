/**
 * JSON request bodies. Each route states the media type it takes; anything
 * else is a 415, a body over the limit a 413 and unparsable JSON a 400.
 * co-body (with bourne) refuses prototype-poisoning keys.
 *
 * A body without a Content-Encoding is read and parsed alike by body-text.ts.
 *
 * Compressed bodies (gzip, deflate, br) are accepted; the size limit applies
 * to the decompressed body. An unknown Content-Encoding or a charset other
 * than UTF-8 is a 415, and a body that does not decode as its
 * Content-Encoding says is a 400 naming `(body)`: never a 500.
 */
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import parse from 'co-body'
import type { Context, Middleware, Request } from 'koa'
import { AppError, UnsupportedMediaTypeError, ValidationError } from '../../app'
import { parseBodyText, readBodyText, readsAsText } from './body-text'

/** Bodies an earlier middleware read already, as sent (idempotency keys hash them): parsed from here, as the stream is spent. */
const readAhead = new WeakMap<IncomingMessage, Buffer>()

/**
 * The request body's bytes as sent (before any Content-Encoding is undone),
 * for a middleware that must see them before the route parses them; the
 * route's parser then reads these bytes. 413 beyond `limitBytes`.
 */
export async function readBodyAhead(ctx: Context, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limitBytes) throw new AppError('payload_too_large')
    chunks.push(chunk)
  }
  const body = Buffer.concat(chunks)
  readAhead.set(ctx.req, body)
  return body
}

/** What co-body reads: the request itself, or a stream of the bytes read ahead with the request's headers. */
function bodySource(ctx: Context): Context | IncomingMessage {
  const body = readAhead.get(ctx.req)
  if (!body) return ctx
  return Object.assign(Readable.from([body], { objectMode: false }), { headers: ctx.req.headers }) as unknown as IncomingMessage
}

/** What co-body's inflation decodes; it would answer anything else with an unexposed (500) error. */
const CONTENT_ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br'])

export interface BodyOptions {
  /** The one media type accepted, e.g. `application/merge-patch+json`. */
  type?: string
  /** Whether an empty body is acceptable (it then reads as undefined). */
  optional?: boolean
  /** Whether the body must be a JSON object (a merge patch: `null`, arrays and scalars are a 400). */
  object?: boolean
}

function setBody(request: Request, value: unknown): void {
  request.body = value
}

/** How many distinct Content-Type values a route remembers its verdict on (the header is caller text: bounded). */
const REMEMBERED_CONTENT_TYPES = 16

/** What a request's Content-Type allows: its media type is the route's, its charset (if any) UTF-8. */
interface ContentTypeVerdict {
  accepted: boolean
  decodable: boolean
}

export function bodyParser(limitBytes: number) {
  return function jsonBody({ type = 'application/json', optional = false, object = false }: BodyOptions = {}): Middleware {
    // Nearly every request repeats one of a few Content-Type values: each is parsed once per route.
    const verdicts = new Map<string, ContentTypeVerdict>()
    return async (ctx, next) => {
      if (!hasBody(ctx.req)) {
        if (!optional) throw ValidationError.field('(body)', 'a JSON body is required')
        setBody(ctx.request, undefined)
        return next()
      }
      const verdict = contentTypeVerdict(ctx, type, verdicts)
      if (!verdict.accepted) throw new UnsupportedMediaTypeError(type)
      requireDecodable(ctx.req, verdict)
      let parsed: unknown
      let raw: string
      try {
        if (!readAhead.has(ctx.req) && readsAsText(ctx.req)) {
          raw = await readBodyText(ctx.req, limitBytes)
          parsed = parseBodyText(raw)
        } else {
          ;({ parsed, raw } = await parse.json(bodySource(ctx), { limit: limitBytes, strict: false, returnRawBody: true }))
        }
      } catch (error) {
        throw readFailure(error)
      }
      if (raw.trim() === '') {
        if (!optional) throw ValidationError.field('(body)', 'a JSON body is required')
        setBody(ctx.request, undefined)
      } else if (object && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))) {
        throw ValidationError.field('(body)', 'must be a JSON object')
      } else {
        setBody(ctx.request, parsed)
      }
      return next()
    }
  }
}

/** What an error while reading or parsing a body is answered with. */
function readFailure(error: unknown): unknown {
  // co-body marks a JSON syntax error only with status 400 (no `expose`), which the error handler would treat as a 500.
  if (error instanceof SyntaxError) return ValidationError.field('(body)', 'is not valid JSON')
  // Exposed HTTP errors (413, an aborted request) keep their status; anything else while reading is a body zlib could not decode.
  if ((error as { expose?: boolean }).expose) return error
  return ValidationError.field('(body)', 'could not be decoded as its Content-Encoding says')
}

/**
 * Whether a body comes: a Content-Length above 0 (as Koa's `request.length` reads it) or a
 * Transfer-Encoding. Straight from Node's header map: Koa's `ctx.get` lower-cases the name on every call.
 */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return (length ? Number.parseInt(length, 10) > 0 : false) || Boolean(req.headers['transfer-encoding'])
}

/** The verdict on the request's Content-Type for a route taking `type`: Koa's `ctx.is` and `request.charset`, remembered. */
function contentTypeVerdict(ctx: Context, type: string, verdicts: Map<string, ContentTypeVerdict>): ContentTypeVerdict {
  const value = ctx.req.headers['content-type']
  const known = value === undefined ? undefined : verdicts.get(value)
  if (known) return known
  const verdict = { accepted: Boolean(ctx.is(type)), decodable: isUtf8(ctx) }
  if (value !== undefined && verdicts.size < REMEMBERED_CONTENT_TYPES) verdicts.set(value, verdict)
  return verdict
}

/** Whether the request's charset, if it names one, is UTF-8. */
function isUtf8(ctx: Context): boolean {
  const charset = ctx.request.charset.toLowerCase()
  return charset === '' || charset === 'utf-8' || charset === 'utf8'
}

/**
 * A form body's text (`application/x-www-form-urlencoded`), refused as a JSON body is: 415 for a
 * Content-Encoding or charset it cannot decode, 400 for a body that does not decode, 413 past `limit`.
 */
export async function readFormText(ctx: Context, limit: string): Promise<string> {
  requireDecodable(ctx.req, { accepted: true, decodable: isUtf8(ctx) })
  try {
    return await parse.text(bodySource(ctx), { limit })
  } catch (error) {
    throw readFailure(error)
  }
}

/** 415 for a Content-Encoding co-body cannot decode, or a charset other than UTF-8 (JSON is UTF-8). */
function requireDecodable(req: IncomingMessage, contentType: ContentTypeVerdict): void {
  const encoding = req.headers['content-encoding'] || 'identity'
  if (!CONTENT_ENCODINGS.has(encoding)) {
    throw new AppError('unsupported_content_encoding')
  }
  if (!contentType.decodable) {
    throw new AppError('unsupported_charset')
  }
}

export type JsonBody = ReturnType<typeof bodyParser>
