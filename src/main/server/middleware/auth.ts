import type { Middleware } from 'koa'
import { UnauthenticatedError, type Actor } from '../../app'
import type { AuthService } from '../../app/auth.service'

/**
 * The cached actor, marked with this request's trace id (a copy: the cache's actor
 * is shared by requests). Field by field: V8 copies an object spread with an added
 * property about 50 times slower (about 1.4 µs against 25 ns), on every request.
 */
function withTrace(actor: Actor, traceId: string): Actor {
  return {
    type: actor.type,
    id: actor.id,
    tenantId: actor.tenantId,
    applicationType: actor.applicationType,
    keyId: actor.keyId,
    permissions: actor.permissions,
    rules: actor.rules,
    isMember: actor.isMember,
    traceId
  }
}

/**
 * Resolves the API key to `ctx.state.actor`; 401 when it cannot. The key comes in
 * `SVC-API-KEY`, or in `BT-API-KEY` as Basis Theory's SDKs send it; two different
 * keys in one request are refused (401), not one of them silently chosen.
 * Not async: a cached key costs no promise hop.
 */
export function authenticate(auth: AuthService): Middleware {
  return (ctx, next) => {
    // Straight from Node's header map: Koa's ctx.get lower-cases the name on every call.
    const headers = ctx.req.headers
    const svcKey = (headers['svc-api-key'] as string | undefined) || undefined
    const btKey = (headers['bt-api-key'] as string | undefined) || undefined
    if (svcKey && btKey && svcKey !== btKey) throw new UnauthenticatedError('SVC-API-KEY and BT-API-KEY carry different keys; send one.', 'two different keys')
    const actor = auth.authenticate(svcKey ?? btKey)
    if (actor instanceof Promise) {
      return actor.then((resolved) => {
        ctx.state.actor = withTrace(resolved, ctx.state.traceId)
        return next()
      })
    }
    ctx.state.actor = withTrace(actor, ctx.state.traceId)
    return next()
  }
}
