import type { Middleware } from 'koa'
import { ValidationError } from '../../app'
import { HEADER, type IdempotencyService, type Reservation } from '../../app/idempotency.service'
import type { AppState } from '../types'
import { readBodyAhead } from './body'

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** Printable ASCII, at most 255 characters: Basis Theory's SDKs send UUIDs. */
const ACCEPTABLE_KEY = /^[\x20-\x7e]{1,255}$/

/**
 * `BT-IDEMPOTENCY-KEY` on writes: a retry under the same key gets the first
 * response again instead of running twice. Mounted after authentication (keys
 * belong to a caller). Requests without the header pay one header lookup.
 * Only responses the routes produce are kept; a request that fails with an
 * error frees its key, so a retry runs again.
 */
export function idempotency(service: IdempotencyService, bodyLimitBytes: number): Middleware<AppState> {
  // Not async: a request without the header costs no promise hop.
  return (ctx, next) => {
    const sent = ctx.req.headers['bt-idempotency-key']
    if (sent === undefined || !WRITE_METHODS.has(ctx.method)) return next()
    if (typeof sent !== 'string' || !ACCEPTABLE_KEY.test(sent)) throw ValidationError.field(HEADER, 'must be 1 to 255 printable ASCII characters')
    return runOnce(service, sent, ctx, next, bodyLimitBytes)
  }
}

type Context = Parameters<Middleware<AppState>>[0]

/** Runs the request under its key, or answers with the response stored for it. */
async function runOnce(service: IdempotencyService, key: string, ctx: Context, next: () => Promise<unknown>, bodyLimitBytes: number): Promise<void> {
  const admission = await service.admit(ctx.state.actor, key, { method: ctx.method, url: ctx.url, readBody: () => readBodyAhead(ctx, bodyLimitBytes) })
  if (admission.kind === 'replay') {
    const { status, type, body } = admission.response
    ctx.status = status
    if (type) ctx.type = type
    ctx.body = body
    return
  }
  await runAndKeep(service, admission.reservation, ctx, next)
}

async function runAndKeep(service: IdempotencyService, reservation: Reservation, ctx: Context, next: () => Promise<unknown>): Promise<void> {
  try {
    await next()
  } catch (error) {
    await service.release(reservation)
    throw error
  }
  // Only JSON values and text (or no body) can be replayed; a stream or bytes frees the key.
  const body: unknown = ctx.body ?? null
  const replayable = body === null || typeof body === 'string' || (typeof body === 'object' && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== 'function')
  if (replayable) await service.complete(reservation, { status: ctx.status, type: body === null ? '' : ctx.response.type, body })
  else await service.release(reservation)
}
