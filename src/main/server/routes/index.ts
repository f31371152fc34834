/** Mounts every resource router; each file owns one REST resource (DESIGN §2). */
import type Koa from 'koa'
import type { AppState, RouteDeps } from '../types'
import { applicationsRoutes } from './applications.routes'
import { invitationsRoutes } from './invitations.routes'
import { logsRoutes } from './logs.routes'
import { membersRoutes } from './members.routes'
import { permissionsRoutes } from './permissions.routes'
import { sessionsRoutes } from './sessions.routes'
import { tokenizeRoutes } from './tokenize.routes'
import { tokensRoutes } from './tokens.routes'

const RESOURCE_ROUTES = [tokensRoutes, tokenizeRoutes, logsRoutes, applicationsRoutes, permissionsRoutes, sessionsRoutes, membersRoutes, invitationsRoutes]

export function mountRoutes(app: Koa<AppState>, deps: RouteDeps): void {
  for (const build of RESOURCE_ROUTES) {
    const router = build(deps)
    app.use(router.routes()).use(router.allowedMethods({ throw: false }))
  }
}
