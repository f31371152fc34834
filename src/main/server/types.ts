import type Router from '@koa/router'
import type { Actor } from '../app'
import type { Services } from '../bootstrap/services'
import type { JsonBody } from './middleware/body'

/** Koa state after authentication. */
export interface AppState {
  actor: Actor
  /** The request's `BT-TRACE-ID`, sent or generated (middleware/trace-id.ts). */
  traceId: string
}

export type AppRouter = Router<AppState>

/** What every route module receives. */
export interface RouteDeps {
  services: Services
  /** Body-parsing middleware factory with the configured size limit. */
  json: JsonBody
}
