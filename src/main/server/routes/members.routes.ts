import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

export function membersRoutes({ services }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/tenants/self/members' })
  router.get('/', async (ctx) => {
    ctx.body = await services.members.list(ctx.state.actor, parse(contract.listMembersQuery, ctx.query))
  })
  router.delete('/:id', async (ctx) => {
    await services.members.delete(ctx.state.actor, ctx.params.id)
    ctx.status = 204
  })
  return router
}
