/**
 * Mounted first: turns every thrown error into an RFC 7807 problem document
 * (app/problem.ts). Errors of the HTTP layer (co-body, koa) keep their 4xx
 * status; anything unexpected is also reported through `app.emit('error')`.
 */
import type { Context, Middleware } from 'koa'
import type { Problem } from '../../../shared/types'
import { problem, problemOf, problemOfCode, statusTitle } from '../../app/problem'
import { AppError } from '../../app'

/** Errors from the HTTP layer (co-body, koa) carry an exposable status. */
function httpProblem(error: { status?: number; expose?: boolean; type?: string; message?: string }): Problem | undefined {
  const status = error.status
  if (!status || status < 400 || status >= 500 || !error.expose) return undefined
  if (status === 400 && error.type === 'entity.parse.failed') {
    return problemOfCode('malformed_json', undefined, { errors: { '(body)': ['is not valid JSON'] } })
  }
  if (status === 413) return problemOfCode('payload_too_large')
  if (status === 415) return problemOfCode('unsupported_media_type')
  return problem(status, statusTitle(status) ?? 'Request error', { code: 'http_error' })
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
        body = problemOf(error)
      } else {
        body = httpProblem(error as object) ?? problemOf(error)
        if (body.status === 500) ctx.app.emit('error', error, ctx)
      }
      ctx.status = body.status
      ctx.type = 'application/problem+json'
      ctx.body = body
    }
  }
}
