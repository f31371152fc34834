/**
 * Dispatch to routers by the first segment of the path. Each router's own
 * middleware costs a request several microseconds whether or not it matches
 * (it reads `ctx.host`, parses the path and composes the matched layers), so
 * chaining eight routers made every request pay for all the routers before
 * its own. Here a request reaches only the routers that own its first
 * segment; a path no router owns goes on to the next middleware (a 404).
 * Paths are case-sensitive, as the API document states them: `/LOGS` is a 404.
 */
import type Koa from 'koa'
import compose from 'koa-compose'
import type { AppRouter, AppState } from './types'

/** `/tokens/abc` → `tokens`. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1)
  return end === -1 ? path.slice(1) : path.slice(1, end)
}

/** The first path segments of a router's routes (`tokens` for `/tokens/:id`). */
function segmentsOf(router: AppRouter): Set<string> {
  return new Set(router.stack.map((layer) => firstSegment(String(layer.path))))
}

export type RoutersMiddleware = Koa.Middleware<AppState> & { routers: AppRouter[] }

export function dispatchBySegment(routers: AppRouter[]): RoutersMiddleware {
  const bySegment = new Map<string, AppRouter[]>()
  for (const router of routers) {
    for (const segment of segmentsOf(router)) bySegment.set(segment, [...(bySegment.get(segment) ?? []), router])
  }
  const dispatchers = new Map(
    [...bySegment].map(([segment, owners]) => [
      segment,
      compose(owners.flatMap((router) => [router.routes(), router.allowedMethods({ throw: false })])) as Koa.Middleware<AppState>
    ])
  )
  const middleware: Koa.Middleware<AppState> = (ctx, next) => {
    const dispatch = dispatchers.get(firstSegment(ctx.path))
    return dispatch ? dispatch(ctx, next) : next()
  }
  // Like a router's own middleware (`.router`), it names what it dispatches to: a test lists every mounted route.
  return Object.assign(middleware, { routers })
}
