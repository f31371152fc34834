import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

export function webhooksRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/webhooks' })
  router.post('/', json(), async (ctx) => {
    ctx.body = await services.webhooks.create(ctx.state.actor, parse(contract.webhookBody, ctx.request.body))
    ctx.status = 201
  })
  router.get('/', async (ctx) => {
    ctx.body = await services.webhooks.list(ctx.state.actor, parse(contract.listWebhooksQuery, ctx.query))
  })
  // Before `/:id`, which would otherwise take "event-types" for an id.
  router.get('/event-types', (ctx) => {
    ctx.body = services.webhooks.eventTypes()
  })
  router.get('/:id', async (ctx) => {
    ctx.body = await services.webhooks.get(ctx.state.actor, ctx.params.id)
  })
  router.put('/:id', json(), async (ctx) => {
    ctx.body = await services.webhooks.update(ctx.state.actor, ctx.params.id, parse(contract.webhookBody, ctx.request.body))
  })
  router.delete('/:id', async (ctx) => {
    await services.webhooks.delete(ctx.state.actor, ctx.params.id)
    ctx.status = 204
  })
  router.get('/:id/deliveries', async (ctx) => {
    ctx.body = await services.webhooks.listDeliveries(ctx.state.actor, ctx.params.id, parse(contract.listWebhookDeliveriesQuery, ctx.query))
  })
  return router
}
