/**
 * Mounted first: turns every thrown error into an RFC 7807 problem document.
 * AppErrors are expected and shown as they are; anything else is a bug, answered
 * with a generic 500 whose body says nothing about the internals, and reported
 * through `app.emit('error')`. Raw database errors can contain the values of the
 * statement (knex puts them in the message), so they are never echoed.
 */
import type { Context, Middleware } from 'koa'
import { AppError } from '../../domain/errors'
import type { Problem } from '../../../shared/types'

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  421: 'Misdirected Request',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  503: 'Service Unavailable'
}

export function problem(status: number, detail: string, extra: Partial<Problem> = {}): Problem {
  return {
    type: extra.code ? `https://tessera.local/problems/${extra.code}` : 'about:blank',
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    ...extra
  }
}

/** Errors from the HTTP layer (co-body, koa) carry an exposable status. */
function httpProblem(error: { status?: number; expose?: boolean; type?: string; message?: string }): Problem | undefined {
  const status = error.status
  if (!status || status < 400 || status >= 500 || !error.expose) return undefined
  if (status === 400 && error.type === 'entity.parse.failed') {
    return problem(400, 'The request body is not valid JSON.', { code: 'malformed_json', errors: { '(body)': ['is not valid JSON'] } })
  }
  if (status === 413) return problem(413, 'The request body is too large.', { code: 'payload_too_large' })
  if (status === 415) return problem(415, 'Unsupported request body encoding.', { code: 'unsupported_media_type' })
  return problem(status, TITLES[status] ?? 'Request error', { code: 'http_error' })
}

/** Told of every 401 and 403, for the audit log. */
export type RefusalListener = (ctx: Context, error: AppError) => void

export function errorHandler(onRefused?: RefusalListener): Middleware {
  return async (ctx, next) => {
    try {
      await next()
      // Unrouted paths and methods answer with a problem document too.
      if (ctx.status === 404 && ctx.body == null) {
        throw new AppError('route_not_found', `No route for ${ctx.method} ${ctx.path}.`)
      }
      if (ctx.status === 405 && ctx.body == null) {
        throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`)
      }
    } catch (error) {
      let body: Problem
      if (error instanceof AppError) {
        if (error.status === 401 || error.status === 403) onRefused?.(ctx, error)
        body = problem(error.status, error.message, { code: error.code, ...(error.errors ? { errors: error.errors } : {}) })
      } else {
        body = httpProblem(error as object) ?? problem(500, 'An unexpected error occurred.', { code: 'internal_error' })
        if (body.status === 500) ctx.app.emit('error', error, ctx)
      }
      ctx.status = body.status
      ctx.type = 'application/problem+json'
      ctx.body = body
    }
  }
}
