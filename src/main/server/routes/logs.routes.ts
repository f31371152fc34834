import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

export function logsRoutes({ services }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/logs' })
  router.get('/', async (ctx) => {
    ctx.body = await services.logs.list(ctx.state.actor, parse(contract.listLogsQuery, ctx.query))
  })
  router.get('/entity-types', async (ctx) => {
    ctx.body = await services.logs.listEntityTypes(ctx.state.actor)
  })
  return router
}
