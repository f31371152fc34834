import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

export function applicationsRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/applications' })
  router.post('/', json(), async (ctx) => {
    ctx.body = await services.applications.create(ctx.state.actor, parse(contract.createApplicationCommand, ctx.request.body))
    ctx.status = 201
  })
  router.get('/', async (ctx) => {
    ctx.body = await services.applications.list(ctx.state.actor, parse(contract.listApplicationsQuery, ctx.query))
  })
  // Before `/:id`, which would otherwise take "key" for an id.
  router.get('/key', async (ctx) => {
    ctx.body = await services.applications.getByKey(ctx.state.actor)
  })
  router.get('/:id', async (ctx) => {
    ctx.body = await services.applications.get(ctx.state.actor, ctx.params.id)
  })
  router.put('/:id', json(), async (ctx) => {
    ctx.body = await services.applications.update(ctx.state.actor, ctx.params.id, parse(contract.updateApplicationCommand, ctx.request.body))
  })
  router.post('/:id/regenerate', async (ctx) => {
    ctx.body = await services.applications.regenerate(ctx.state.actor, ctx.params.id)
  })
  router.post('/:id/keys', async (ctx) => {
    ctx.body = await services.applications.createKey(ctx.state.actor, ctx.params.id)
    ctx.status = 201
  })
  router.get('/:id/keys', async (ctx) => {
    parse(contract.listApplicationKeysQuery, ctx.query)
    ctx.body = await services.applications.listKeys(ctx.state.actor, ctx.params.id)
  })
  router.get('/:id/keys/:keyId', async (ctx) => {
    ctx.body = await services.applications.getKey(ctx.state.actor, ctx.params.id, ctx.params.keyId)
  })
  router.delete('/:id/keys/:keyId', async (ctx) => {
    await services.applications.deleteKey(ctx.state.actor, ctx.params.id, ctx.params.keyId)
    ctx.status = 204
  })
  router.delete('/:id', async (ctx) => {
    await services.applications.delete(ctx.state.actor, ctx.params.id)
    ctx.status = 204
  })
  return router
}
