/** Mounts every resource router; each file owns one REST resource. */
import type Koa from 'koa'
import { dispatchBySegment } from '../route-dispatch'
import type { AppRouter, AppState, RouteDeps } from '../types'
import { detokenizeRoutes } from './detokenize.routes'
import { applicationsRoutes } from './applications.routes'
import { invitationsRoutes } from './invitations.routes'
import { logsRoutes } from './logs.routes'
import { membersRoutes } from './members.routes'
import { permissionsRoutes } from './permissions.routes'
import { sessionsRoutes } from './sessions.routes'
import { tokenIntentsRoutes } from './token-intents.routes'
import { tokenizeRoutes } from './tokenize.routes'
import { tenantsRoutes } from './tenants.routes'
import { tokensRoutes, tokensV2Routes } from './tokens.routes'
import { webhooksRoutes } from './webhooks.routes'

const RESOURCE_ROUTES = [tokensRoutes, tokensV2Routes, tokenIntentsRoutes, tokenizeRoutes, detokenizeRoutes, logsRoutes, applicationsRoutes, permissionsRoutes, sessionsRoutes, membersRoutes, tenantsRoutes, invitationsRoutes, webhooksRoutes]

/** Mounts the resource routers and returns them. */
export function mountRoutes(app: Koa<AppState>, deps: RouteDeps): AppRouter[] {
  const routers = RESOURCE_ROUTES.map((build) => build(deps))
  app.use(dispatchBySegment(routers))
  return routers
}
