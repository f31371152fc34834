import Router from '@koa/router'
import { openApiDocument } from '../openapi'
import type { AppState, RouteDeps } from '../types'
import { DatabaseUnavailableError } from '../../app'

/** Endpoints that take no API key. */
export function publicRoutes({ services }: RouteDeps) {
  const router = new Router<AppState>()
  // Serialised once, when the server is built: the document depends only on the code.
  const document = JSON.stringify(openApiDocument())
  // For load balancers: a team vault's instance that cannot reach its database answers 503.
  router.get('/health', async (ctx) => {
    if (!(await services.health.healthy())) throw new DatabaseUnavailableError()
    ctx.body = { status: 'ok' }
  })
  // Basis Theory's `GET /ping` (the SDK's webhooks.ping()): the same answer, for the same purpose.
  router.get('/ping', (ctx) => {
    ctx.body = { status: 'ok' }
  })
  // The key webhook deliveries are signed with, for receivers to check `BT-SIGNATURE` (docs/basis-theory.md).
  router.get('/webhooks/signing-key', async (ctx) => {
    ctx.type = 'application/x-pem-file'
    ctx.body = await services.webhooks.signingPublicKey()
  })
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json'
    ctx.body = document
  })
  return router
}
