import Router from '@koa/router'
import type { AppState, RouteDeps } from '../types'

export function tokenizeRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>()
  router.post('/tokenize', json(), async (ctx) => {
    ctx.body = await services.tokenize.tokenize(ctx.state.actor, ctx.request.body)
  })
  return router
}
