import { randomUUID } from 'node:crypto'
import type { Middleware } from 'koa'

/** Printable ASCII, at most 128 characters: what the header may carry back without harm. */
const ACCEPTABLE_TRACE_ID = /^[\x20-\x7e]{1,128}$/

/**
 * Basis Theory's `BT-TRACE-ID`: the caller's id of the request, echoed in the
 * response's `BT-TRACE-ID` (errors included), or a new UUID when the caller sent
 * none or one too long or unprintable to echo. Mounted before the error handler.
 */
export const traceId: Middleware = (ctx, next) => {
  const sent = ctx.req.headers['bt-trace-id']
  const id = typeof sent === 'string' && ACCEPTABLE_TRACE_ID.test(sent) ? sent : randomUUID()
  ctx.state.traceId = id
  // Nothing is sent yet: Node's setHeader directly, as noStore does.
  ctx.res.setHeader('BT-TRACE-ID', id)
  return next()
}
