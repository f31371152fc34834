import type { Middleware } from 'koa'
import type { AuthService } from '../../services/auth.service'

/** Resolves SVC-API-KEY to `ctx.state.actor`; 401 when it cannot. */
export function authenticate(auth: AuthService): Middleware {
  return async (ctx, next) => {
    ctx.state.actor = await auth.authenticate(ctx.get('svc-api-key') || undefined)
    await next()
  }
}
