import Router from '@koa/router'
import type { AppState, RouteDeps } from '../types'

export function detokenizeRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>()
  router.post('/detokenize', json(), async (ctx) => {
    const result = await services.detokenize.run(ctx.state.actor, ctx.request.body)
    // Serialised here: Koa would send a bare string (a body that is one expression) as text/plain and null as a 204.
    ctx.type = 'application/json'
    ctx.body = JSON.stringify(result)
  })
  return router
}
