/**
 * The Koa application: a thin adapter from HTTP to the services. It parses,
 * authenticates and maps errors; all rules live in the services.
 */
import cors from '@koa/cors'
import Router from '@koa/router'
import Koa from 'koa'
import type { Logger } from '../infra/logger'
import type { Services } from '../bootstrap/services'
import { UnauthenticatedError } from '../app'
import { authenticate } from './middleware/auth'
import { bodyParser } from './middleware/body'
import { errorHandler, type RefusalListener } from './middleware/errors'
import { addressMatcher } from '../infra/address-list'
import { refuseAllButProxies, trustForwardingFrom } from './middleware/forwarded'
import { hostCheck } from './middleware/host-check'
import { idempotency } from './middleware/idempotency'
import { traceId } from './middleware/trace-id'
import { dispatchBySegment } from './route-dispatch'
import { mountRoutes } from './routes'
import { invitationAcceptRoutes } from './routes/invitation-accept.routes'
import { publicRoutes } from './routes/public.routes'
import type { AppState } from './types'

export interface ServerOptions {
  logger: Logger
  /** Extra Host header values to accept besides loopback names. */
  allowedHosts?: string[]
  /** Reverse proxies (addresses or CIDR ranges) whose forwarding headers are believed; none by default. */
  trustedProxies?: string[]
  /** Refuse (403) requests from any peer but the trusted proxies and loopback: plain HTTP beyond loopback. */
  onlyFromProxies?: boolean
  /** Origins allowed by CORS (for public applications collecting in a browser); none by default. */
  corsOrigins?: string[]
  /** Largest accepted request body; 5 MB by default. */
  bodyLimitBytes?: number
}

export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024

export function createServer(services: Services, options: ServerOptions): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false })
  app.silent = true
  readHostDirectly(app)
  app.on('error', (error: Error & { code?: string }) => {
    // Only the name and code: a database error's message can contain statement values.
    options.logger.error({ err: { name: error.name, code: error.code } }, 'unhandled error')
  })
  app.use(noStore)
  app.use(traceId)
  // Before the refusal log, which records the client address this sets.
  const trustedProxy = options.trustedProxies?.length ? addressMatcher(options.trustedProxies) : undefined
  if (trustedProxy) app.use(trustForwardingFrom(trustedProxy))
  const routers: Router<AppState>[] = []
  app.use(errorHandler(auditRefusals(services, routers)))
  if (options.onlyFromProxies && trustedProxy) app.use(refuseAllButProxies(trustedProxy))
  app.use(hostCheck(options.allowedHosts))
  if (options.corsOrigins?.length) {
    const origins = new Set(options.corsOrigins)
    app.use(cors({ origin: (ctx) => (origins.has(ctx.get('origin')) ? ctx.get('origin') : ''), allowHeaders: ['SVC-API-KEY', 'BT-API-KEY', 'BT-TRACE-ID', 'BT-IDEMPOTENCY-KEY', 'Content-Type'], exposeHeaders: ['BT-TRACE-ID'] }))
  }
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT
  const deps = { services, json: bodyParser(bodyLimitBytes) }
  const keyless = [publicRoutes(deps), invitationAcceptRoutes(deps)]
  app.use(dispatchBySegment(keyless))
  app.use(authenticate(services.auth))
  app.use(idempotency(services.idempotency, bodyLimitBytes, (method, path) => routeOf(routers, method, path)))
  routers.push(...keyless, ...mountRoutes(app, deps))
  return app
}

/**
 * `ctx.host` as Koa computes it, without its header lookup and comma split in
 * the common case: a single plain Host header. @koa/router reads `ctx.host` on
 * every dispatch (for host-bound routers, which Tessera has none of).
 */
function readHostDirectly(app: Koa<AppState>): void {
  const koaHost = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(app.request), 'host')!.get!
  Object.defineProperty(app.request, 'host', {
    get(this: Koa.Request) {
      const header = this.req.headers.host
      const plain = !this.app.proxy && this.req.httpVersionMajor < 2 && header !== undefined && !header.includes(',') && !header.includes('@')
      return plain ? header : koaHost.call(this)
    }
  })
}

/**
 * Responses carry keys, plaintext and one-time links: no cache (browser,
 * proxy or HTTP library) may keep any of them. Set first, so errors carry it too.
 */
const noStore: Koa.Middleware = (ctx, next) => {
  // Nothing is sent before the first middleware runs: Node's setHeader directly, without Koa's checks.
  ctx.res.setHeader('Cache-Control', 'no-store')
  return next()
}

/** The route a request goes to, named by its pattern (`GET /tokens/:id`): the path itself is caller text and unbounded. */
function routeOf(routers: Router<AppState>[], method: string, path: string): string {
  for (const router of routers) {
    const layer = router.match(path, method).pathAndMethod.find((candidate) => candidate.methods.length > 0)
    if (layer) return `${method} ${String(layer.path)}`
  }
  return `${method} (no such route)`
}

/**
 * Hands every 401 and 403 to the audit log's aggregation, named by route
 * (`GET /tokens/:id`): the path itself is caller text and unbounded.
 */
function auditRefusals(services: Services, routers: Router<AppState>[]): RefusalListener {
  return (ctx, error) =>
    services.denials.record({
      status: error.status as 401 | 403,
      reason: error instanceof UnauthenticatedError ? error.reason : error.message,
      source: ctx.ip || 'unknown address',
      operation: routeOf(routers, ctx.method.slice(0, 20), ctx.path),
      actor: error.status === 403 ? (ctx.state as AppState).actor : undefined,
      traceId: (ctx.state as AppState).traceId
    })
}
