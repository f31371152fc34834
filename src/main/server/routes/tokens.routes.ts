import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

export function tokensRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/tokens' })
  router.post('/', json(), async (ctx) => {
    const { token, created } = await services.tokens.create(ctx.state.actor, parse(contract.createTokenBody, ctx.request.body))
    ctx.status = created ? 201 : 200
    ctx.body = token
  })
  router.get('/', async (ctx) => {
    ctx.body = await services.tokens.list(ctx.state.actor, parse(contract.listTokensSearch, ctx.query))
  })
  router.get('/:id', async (ctx) => {
    ctx.body = await services.tokens.get(ctx.state.actor, ctx.params.id)
  })
  // Spec: updates are RFC 7386 merge patches; any other Content-Type is a 415. A patch that
  // is not an object would replace the whole token (RFC 7386), which an update never does: 400.
  router.patch('/:id', json({ type: 'application/merge-patch+json', object: true }), async (ctx) => {
    ctx.body = await services.tokens.update(ctx.state.actor, ctx.params.id, parse(contract.updateTokenBody, ctx.request.body))
  })
  router.delete('/:id', async (ctx) => {
    await services.tokens.delete(ctx.state.actor, ctx.params.id)
    ctx.status = 204
  })
  return router
}
