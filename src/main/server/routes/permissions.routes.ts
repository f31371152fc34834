import Router from '@koa/router'
import * as contract from '../../../shared/contracts'
import { parse } from '../../app'
import type { AppState, RouteDeps } from '../types'

/** `GET /permissions?application_type=` (beyond the spec): open to any authenticated caller. */
export function permissionsRoutes({ services }: RouteDeps) {
  const router = new Router<AppState>({ prefix: '/permissions' })
  router.get('/', (ctx) => {
    ctx.body = services.applications.listPermissions(parse(contract.permissionsQuery, ctx.query))
  })
  return router
}
