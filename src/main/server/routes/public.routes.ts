import Router from '@koa/router'
import { openApiDocument } from '../openapi'
import type { AppState, RouteDeps } from '../types'

/** Endpoints that take no API key. */
export function publicRoutes({ services }: RouteDeps) {
  const router = new Router<AppState>()
  // Serialised once, when the server is built: the document depends only on the code.
  const document = JSON.stringify(openApiDocument())
  router.get('/health', (ctx) => {
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
