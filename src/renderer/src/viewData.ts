import type { RouteLocationNormalized } from 'vue-router'
import { useLogsStore } from './stores/logs'
import { useTokensStore } from './stores/tokens'
import { useVaultStore } from './stores/vault'

/**
 * What a list view reads first, keyed by route name. The views ask for it
 * themselves as they are set up; asking as soon as the route is chosen too
 * lets the read travel while the view's chunk loads and its components mount
 * (the view then joins the read instead of asking again).
 */
const FIRST_READS: Record<string, () => Promise<boolean>> = {
  tokens: () => useTokensStore().loadForView(),
  logs: () => useLogsStore().open()
}

/** Starts the first read of the view `to` shows, when the vault is open; resolves once it has answered. */
export function readViewData(to: Pick<RouteLocationNormalized, 'name'>): Promise<unknown> {
  const read = typeof to.name === 'string' ? FIRST_READS[to.name] : undefined
  return read && useVaultStore().unlocked ? read() : Promise.resolve()
}
