import Router from '@koa/router'
import type { AppState, RouteDeps } from '../types'

export function tokenizeRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>()
  router.post('/tokenize', json(), async (ctx) => {
    const result = await services.tokenize.run(ctx.state.actor, ctx.request.body)
    // Serialised here: Koa would send a bare string (a plain value's token id) as text/plain and null as a 204.
    ctx.type = 'application/json'
    ctx.body = JSON.stringify(result)
  })
  return router
}
