import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

function isIntentConversion(body: unknown): boolean {
  return typeof body === 'object' && body !== null && Object.hasOwn(body, 'token_intent_id')
}

export function tokensRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/tokens' })
  router.post('/', json(), async (ctx) => {
    const body = ctx.request.body
    // With `token_intent_id` (Basis Theory's conversion), the intent supplies the type and data.
    const { token, created } = isIntentConversion(body)
      ? await services.tokenIntents.convert(ctx.state.actor, parse(contract.convertTokenIntentBody, body))
      : await services.tokens.create(ctx.state.actor, parse(contract.createTokenBody, body))
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

/** Basis Theory's v2 token list and search: cursor pages (`pagination.next`, passed back as `start`). */
export function tokensV2Routes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/v2/tokens' })
  router.get('/', async (ctx) => {
    ctx.body = await services.tokens.listV2(ctx.state.actor, parse(contract.listTokensV2Search, ctx.query))
  })
  router.post('/search', json(), async (ctx) => {
    ctx.body = await services.tokens.searchV2(ctx.state.actor, parse(contract.searchTokensV2Body, ctx.request.body))
  })
  return router
}
