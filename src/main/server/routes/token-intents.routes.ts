import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

export function tokenIntentsRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/token-intents' })
  router.post('/', json(), async (ctx) => {
    ctx.body = await services.tokenIntents.create(ctx.state.actor, parse(contract.createTokenIntentBody, ctx.request.body))
    ctx.status = 201
  })
  router.get('/:id', async (ctx) => {
    ctx.body = await services.tokenIntents.get(ctx.state.actor, ctx.params.id)
  })
  router.delete('/:id', async (ctx) => {
    await services.tokenIntents.delete(ctx.state.actor, ctx.params.id)
    ctx.status = 204
  })
  return router
}
