import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

export function tenantsRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/tenants/self' })
  router.get('/', async (ctx) => {
    ctx.body = await services.tenants.get(ctx.state.actor)
  })
  router.put('/', json(), async (ctx) => {
    ctx.body = await services.tenants.update(ctx.state.actor, parse(contract.updateTenantBody, ctx.request.body))
  })
  return router
}
