import Router from '@koa/router'
import type { AppState, RouteDeps } from '../types'

export function logsRoutes({ services }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/logs' })
  router.get('/', async (ctx) => {
    ctx.body = await services.logs.list(ctx.state.actor, ctx.query)
  })
  router.get('/entity-types', async (ctx) => {
    ctx.body = await services.logs.entityTypes(ctx.state.actor)
  })
  return router
}
