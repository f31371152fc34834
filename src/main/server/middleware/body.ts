/**
 * JSON request bodies. Each route states the media type it takes; anything
 * else is a 415, a body over the limit a 413 and unparsable JSON a 400.
 * co-body (with bourne) refuses prototype-poisoning keys.
 */
import parse from 'co-body'
import type { Middleware, Request } from 'koa'
import { UnsupportedMediaTypeError, ValidationError } from '../../services/errors'

export interface BodyOptions {
  /** The one media type accepted, e.g. `application/merge-patch+json`. */
  type?: string
  /** Whether an empty body is acceptable (it then reads as undefined). */
  optional?: boolean
}

function setBody(request: Request, value: unknown): void {
  request.body = value
}

export function bodyParser(limitBytes: number) {
  return function jsonBody({ type = 'application/json', optional = false }: BodyOptions = {}): Middleware {
    return async (ctx, next) => {
      const hasBody = ctx.request.length > 0 || ctx.get('transfer-encoding') !== ''
      if (!hasBody) {
        if (!optional) throw ValidationError.field('(body)', 'a JSON body is required')
        setBody(ctx.request, undefined)
        return next()
      }
      if (!ctx.is(type)) throw new UnsupportedMediaTypeError(type)
      const { parsed, raw } = await parse.json(ctx, { limit: limitBytes, strict: false, returnRawBody: true }).catch((error: unknown) => {
        // co-body marks a JSON syntax error only with status 400 (no `expose`), which the error handler would treat as a 500.
        if (error instanceof SyntaxError) throw ValidationError.field('(body)', 'is not valid JSON')
        throw error
      })
      if (raw.trim() === '') {
        if (!optional) throw ValidationError.field('(body)', 'a JSON body is required')
        setBody(ctx.request, undefined)
      } else {
        setBody(ctx.request, parsed)
      }
      return next()
    }
  }
}

export type JsonBody = ReturnType<typeof bodyParser>
