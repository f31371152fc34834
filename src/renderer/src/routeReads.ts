/**
 * The first read a route asked for as it was chosen (viewData.ts), kept for
 * the view that route shows. The view is set up once its chunk has loaded,
 * which may be after that read has answered: it takes the read rather than
 * asking again (every read of a list is written to the audit log). Only the
 * latest navigation's read is kept, and only until a view takes it, so a later
 * visit never joins an old read.
 */
let offered: { route: string; read: Promise<unknown> } | undefined

/** Keeps `read`, the first read the navigation to `route` asked for; none clears what an earlier navigation left. */
export function offerRouteRead(route: string | undefined, read: Promise<unknown> | undefined): void {
  offered = route !== undefined && read !== undefined ? { route, read } : undefined
}

/** The read the navigation to `route` asked for, once; undefined when it asked for none. */
export function takeRouteRead(route: string): Promise<unknown> | undefined {
  const taken = offered?.route === route ? offered.read : undefined
  offered = undefined
  return taken
}
