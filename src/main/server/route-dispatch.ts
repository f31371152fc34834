/**
 * Dispatch to routers by the first segment of the path. Each router's own
 * middleware costs a request several microseconds whether or not it matches
 * (it reads `ctx.host`, parses the path and composes the matched layers), so
 * chaining eight routers made every request pay for all the routers before
 * its own. Here a request reaches only the routers that own its first
 * segment; a path no router owns goes on to the next middleware (a 404).
 * Paths are case-sensitive, as the API document states them: `/LOGS` is a 404.
 */
import type { Layer, RouterContext } from '@koa/router'
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
      compose(owners.flatMap((router) => [routesComposedOnce(router), router.allowedMethods({ throw: false })])) as Koa.Middleware<AppState>
    ])
  )
  const middleware: Koa.Middleware<AppState> = (ctx, next) => {
    const dispatch = dispatchers.get(firstSegment(ctx.path))
    return dispatch ? dispatch(ctx, next) : next()
  }
  // Like a router's own middleware (`.router`), it names what it dispatches to: a test lists every mounted route.
  return Object.assign(middleware, { routers })
}

/**
 * `router.routes()`, with each route's middleware composed once. @koa/router composes the matched
 * layers' middleware anew for every request, and koa-compose flattens the list with a copy per
 * element: about a microsecond a request. A request that matches one layer with its method runs
 * that layer's middleware as composed the first time, once the context holds what the router sets;
 * anything else (no route for the method: 404, 405, OPTIONS; several layers) goes to the router.
 */
function routesComposedOnce(router: AppRouter): Koa.Middleware<AppState> {
  const routes = router.routes() as Koa.Middleware<AppState>
  if (router.host !== undefined || router.opts.routerPath !== undefined) return routes
  const chains = new Map<Layer<AppState>, Koa.Middleware<AppState>>()
  return (ctx, next) => {
    const path = ctx.path
    const match = router.match(path, ctx.method)
    if (!match.route || match.pathAndMethod.length !== 1) return routes(ctx, next)
    const layer = match.pathAndMethod[0]
    let chain = chains.get(layer)
    if (!chain) chains.set(layer, (chain = compose(layer.stack as Koa.Middleware<AppState>[])))
    enterRoute(ctx as unknown as RouterContext<AppState>, router, layer, match.path, path)
    return chain(ctx, next)
  }
}

/** What @koa/router sets on the context before it runs a route's middleware. */
function enterRoute(ctx: RouterContext<AppState>, router: AppRouter, layer: Layer<AppState>, matched: Layer<AppState>[], path: string): void {
  if (ctx.matched) ctx.matched.push(...matched)
  else ctx.matched = matched
  ctx.router = router
  ctx.routeMatched = true
  ctx.captures = layer.captures(path)
  ctx.request.params = layer.params(path, ctx.captures, ctx.params)
  ctx.params = ctx.request.params
  ctx.routerPath = layer.path as string
  ctx.routerName = layer.name || undefined
  ctx._matchedRoute = layer.path
  if (layer.name) ctx._matchedRouteName = layer.name
}
