import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

export function sessionsRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/sessions' })
  // The spec gives POST /sessions no body; an empty JSON object is tolerated, any field is a 400.
  router.post('/', json({ optional: true }), async (ctx) => {
    parse(contract.createSessionBody, ctx.request.body)
    const { id: _id, ...created } = await services.sessions.create(ctx.state.actor)
    ctx.body = created
    ctx.status = 201
  })
  router.post('/authorize', json(), async (ctx) => {
    await services.sessions.authorize(ctx.state.actor, parse(contract.authorizeSessionBody, ctx.request.body))
    ctx.status = 204
  })
  router.get('/', async (ctx) => {
    ctx.body = await services.sessions.list(ctx.state.actor, parse(contract.listSessionsQuery, ctx.query))
  })
  router.delete('/:id', async (ctx) => {
    await services.sessions.revoke(ctx.state.actor, ctx.params.id)
    ctx.status = 204
  })
  return router
}
