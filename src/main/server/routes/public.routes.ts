import Router from '@koa/router'
import type { AppState, RouteDeps } from '../types'

/** Endpoints that take no API key. */
export function publicRoutes(_deps: RouteDeps) {
  const router = new Router<AppState>()
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok' }
  })
  return router
}
