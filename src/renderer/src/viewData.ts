import type { RouteLocationNormalized } from 'vue-router'
import { offerRouteRead } from './routeReads'
import { useLogsStore } from './stores/logs'
import { useTokensStore } from './stores/tokens'
import { useVaultStore } from './stores/vault'

/**
 * What a list view reads first, keyed by route name. The views ask for it
 * themselves as they are set up; asking as soon as the route is chosen too
 * lets the read travel while the view's chunk loads and its components mount
 * (the view then takes that read instead of asking again: routeReads.ts).
 */
const FIRST_READS: Record<string, () => Promise<boolean>> = {
  tokens: () => useTokensStore().loadForView(),
  logs: () => useLogsStore().open()
}

/** Starts the first read of the view `to` shows, when the vault is open, and keeps it for that view; resolves once it has answered. */
export function readViewData(to: Pick<RouteLocationNormalized, 'name'>): Promise<unknown> {
  const route = typeof to.name === 'string' ? to.name : undefined
  const read = route === undefined ? undefined : FIRST_READS[route]
  const asked = read && useVaultStore().unlocked ? read() : undefined
  offerRouteRead(route, asked)
  return asked ?? Promise.resolve()
}
