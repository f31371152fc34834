import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

export function invitationsRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/tenants/self/invitations' })
  router.post('/', json(), async (ctx) => {
    ctx.body = await services.invitations.create(ctx.state.actor, parse(contract.createInvitationCommand, ctx.request.body))
    ctx.status = 201
  })
  router.get('/', async (ctx) => {
    ctx.body = await services.invitations.list(ctx.state.actor, parse(contract.listInvitationsQuery, ctx.query))
  })
  router.get('/:id', async (ctx) => {
    ctx.body = await services.invitations.get(ctx.state.actor, ctx.params.id)
  })
  router.post('/:id/resend', async (ctx) => {
    ctx.body = await services.invitations.resend(ctx.state.actor, ctx.params.id)
  })
  router.delete('/:id', async (ctx) => {
    await services.invitations.delete(ctx.state.actor, ctx.params.id)
    ctx.status = 204
  })
  return router
}
