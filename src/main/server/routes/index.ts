/** Mounts every resource router; each file owns one REST resource. */
import type Koa from 'koa'
import { dispatchBySegment } from '../route-dispatch'
import type { AppRouter, AppState, RouteDeps } from '../types'
import { applicationsRoutes } from './applications.routes'
import { invitationsRoutes } from './invitations.routes'
import { logsRoutes } from './logs.routes'
import { membersRoutes } from './members.routes'
import { permissionsRoutes } from './permissions.routes'
import { sessionsRoutes } from './sessions.routes'
import { tokenizeRoutes } from './tokenize.routes'
import { tokensRoutes } from './tokens.routes'

const RESOURCE_ROUTES = [tokensRoutes, tokenizeRoutes, logsRoutes, applicationsRoutes, permissionsRoutes, sessionsRoutes, membersRoutes, invitationsRoutes]

/** Mounts the resource routers and returns them. */
export function mountRoutes(app: Koa<AppState>, deps: RouteDeps): AppRouter[] {
  const routers = RESOURCE_ROUTES.map((build) => build(deps))
  app.use(dispatchBySegment(routers))
  return routers
}
