import type { Middleware } from 'koa'
import { ValidationError } from '../../app'
import { HEADER, type IdempotencyService, type ReplayRule, type Reservation } from '../../app/idempotency.service'
import type { AppState } from '../types'
import { readBodyAhead } from './body'

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** Printable ASCII, at most 255 characters: Basis Theory's SDKs send UUIDs. */
const ACCEPTABLE_KEY = /^[\x20-\x7e]{1,255}$/

/**
 * Reads sent as POST: running one again has the effect of a replay, and is
 * checked and audited as any read, so they keep nothing.
 */
export const READS = new Set(['POST /detokenize', 'POST /v2/tokens/search'])

/** Each write route (`METHOD /pattern`, as the routers name it): what of its response is kept, and the permissions a replay needs now (the route's own). */
export const REPLAY_RULES: Record<string, ReplayRule> = {
  'POST /tokens': { keep: 'token-identities', permissions: ['token:create'] },
  'PATCH /tokens/:id': { keep: 'token-identities', permissions: ['token:update'] },
  'DELETE /tokens/:id': { keep: 'response', permissions: ['token:delete'] },
  'POST /tokenize': { keep: 'token-identities', permissions: ['token:create'] },
  'POST /token-intents': { keep: 'token-identities', permissions: ['token:create'] },
  'DELETE /token-intents/:id': { keep: 'response', permissions: ['token:delete'] },
  'POST /applications': { keep: 'outcome', permissions: ['application:create'] },
  'PUT /applications/:id': { keep: 'response', permissions: ['application:update'] },
  'DELETE /applications/:id': { keep: 'response', permissions: ['application:delete'] },
  'POST /applications/:id/regenerate': { keep: 'outcome', permissions: ['application:update'] },
  'POST /applications/:id/keys': { keep: 'outcome', permissions: ['application:update'] },
  'DELETE /applications/:id/keys/:keyId': { keep: 'response', permissions: ['application:update'] },
  // Sessions are created and authorized by key type, not by a permission.
  'POST /sessions': { keep: 'outcome' },
  'POST /sessions/authorize': { keep: 'response' },
  'DELETE /sessions/:id': { keep: 'response', permissions: ['application:delete'] },
  'PUT /tenants/self': { keep: 'response', permissions: ['tenant:update'] },
  'DELETE /tenants/self/members/:id': { keep: 'response', permissions: ['tenant:member:delete'] },
  'POST /tenants/self/invitations': { keep: 'response', permissions: ['tenant:invitation:create'] },
  'POST /tenants/self/invitations/:id/resend': { keep: 'response', permissions: ['tenant:invitation:create', 'tenant:invitation:update'] },
  'DELETE /tenants/self/invitations/:id': { keep: 'response', permissions: ['tenant:invitation:delete'] },
  'POST /webhooks': { keep: 'response', permissions: ['webhook:create'] },
  'PUT /webhooks/:id': { keep: 'response', permissions: ['webhook:update'] },
  'DELETE /webhooks/:id': { keep: 'response', permissions: ['webhook:delete'] }
}

/** A write route missing from the table keeps no more than that it succeeded. */
const UNLISTED: ReplayRule = { keep: 'outcome' }

/** Names the route a request goes to (`POST /tokens/:id`), or says there is none. */
export type RouteOf = (method: string, path: string) => string

/**
 * `BT-IDEMPOTENCY-KEY` on writes: a retry under the same key gets the first
 * response again instead of running twice. Mounted after authentication (keys
 * belong to a caller). Requests without the header pay one header lookup.
 * Only responses the routes produce are kept; a request that fails with an
 * error frees its key, so a retry runs again. A request whose change committed
 * but whose response was never kept (the service stopped) is not run again.
 */
export function idempotency(service: IdempotencyService, bodyLimitBytes: number, routeOf: RouteOf): Middleware<AppState> {
  // Not async: a request without the header costs no promise hop.
  return (ctx, next) => {
    const sent = ctx.req.headers['bt-idempotency-key']
    if (sent === undefined || !WRITE_METHODS.has(ctx.method)) return next()
    if (typeof sent !== 'string' || !ACCEPTABLE_KEY.test(sent)) throw ValidationError.field(HEADER, 'must be 1 to 255 printable ASCII characters')
    const route = routeOf(ctx.method, ctx.path)
    if (READS.has(route)) return next()
    return runOnce(service, sent, route, ctx, next, bodyLimitBytes)
  }
}

type Context = Parameters<Middleware<AppState>>[0]

/** Runs the request under its key, or answers with the response stored for it. */
async function runOnce(service: IdempotencyService, key: string, route: string, ctx: Context, next: () => Promise<unknown>, bodyLimitBytes: number): Promise<void> {
  const rule = REPLAY_RULES[route] ?? UNLISTED
  const admission = await service.admit(ctx.state.actor, key, { method: ctx.method, url: ctx.url, route, readBody: () => readBodyAhead(ctx, bodyLimitBytes) }, rule)
  if (admission.kind === 'replay') {
    const { status, type, body } = admission.response
    ctx.status = status
    if (type) ctx.type = type
    ctx.body = body
    return
  }
  await runAndKeep(service, admission.reservation, rule, ctx, next)
}

async function runAndKeep(service: IdempotencyService, reservation: Reservation, rule: ReplayRule, ctx: Context, next: () => Promise<unknown>): Promise<void> {
  // The request's change records that it committed under this key, in its own transaction (app/audit.ts).
  ctx.state.actor = { ...ctx.state.actor, idempotencyKey: reservation }
  try {
    await next()
  } catch (error) {
    await service.release(reservation)
    throw error
  }
  // Only JSON values and text (or no body) can be replayed; a stream or bytes frees the key.
  const body: unknown = ctx.body ?? null
  const replayable = body === null || typeof body === 'string' || (typeof body === 'object' && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== 'function')
  if (replayable) await service.complete(reservation, { status: ctx.status, type: body === null ? '' : ctx.response.type, body }, rule.keep)
  else await service.release(reservation)
}
