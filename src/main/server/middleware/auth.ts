import type { Middleware } from 'koa'
import type { AuthService } from '../../app/auth.service'

/** Resolves SVC-API-KEY to `ctx.state.actor`; 401 when it cannot. Not async: a cached key costs no promise hop. */
export function authenticate(auth: AuthService): Middleware {
  return (ctx, next) => {
    // Straight from Node's header map: Koa's ctx.get lower-cases the name on every call.
    const actor = auth.authenticate((ctx.req.headers['svc-api-key'] as string | undefined) || undefined)
    if (actor instanceof Promise) {
      return actor.then((resolved) => {
        ctx.state.actor = resolved
        return next()
      })
    }
    ctx.state.actor = actor
    return next()
  }
}
