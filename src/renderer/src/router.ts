import type { Component } from 'vue'
import { createRouter, createWebHashHistory, loadRouteLocation, type RouteRecordRaw, type Router } from 'vue-router'
import type { IconName } from './components/icons'

export interface NavEntry {
  path: string
  name: string
  title: string
  icon: IconName
}

/** The sidebar, in order; Alt+1…Alt+8 jump to these (Webhooks last, so the older views keep their keys). */
export const NAVIGATION: NavEntry[] = [
  { path: '/tokens', name: 'tokens', title: 'Tokens', icon: 'tokens' },
  { path: '/tokenize', name: 'tokenize', title: 'Bulk tokenize', icon: 'tokenize' },
  { path: '/logs', name: 'logs', title: 'Audit logs', icon: 'logs' },
  { path: '/applications', name: 'applications', title: 'Applications', icon: 'applications' },
  { path: '/sessions', name: 'sessions', title: 'Sessions', icon: 'sessions' },
  { path: '/members', name: 'members', title: 'Members', icon: 'members' },
  { path: '/settings', name: 'settings', title: 'Settings', icon: 'settings' },
  { path: '/webhooks', name: 'webhooks', title: 'Webhooks', icon: 'webhooks' }
]

/**
 * Each view is its own chunk, loaded when first opened: a window opened on one
 * view parses only the shell and that view, not all of them.
 */
const VIEWS = {
  tokens: () => import('./views/TokensView.vue'),
  tokenize: () => import('./views/TokenizeView.vue'),
  logs: () => import('./views/LogsView.vue'),
  applications: () => import('./views/ApplicationsView.vue'),
  sessions: () => import('./views/SessionsView.vue'),
  members: () => import('./views/MembersView.vue'),
  settings: () => import('./views/SettingsView.vue'),
  webhooks: () => import('./views/WebhooksView.vue')
}

type ViewName = keyof typeof VIEWS

/**
 * The list views the shell keeps while another view shows, and makes ahead of
 * their first visit (AppShell.vue).
 */
export const KEPT_VIEWS: ViewName[] = ['tokens', 'logs']

/** The component of the view `name`, its chunk loaded if it is not in yet. */
export async function loadView(name: ViewName): Promise<Component> {
  return (await VIEWS[name]()).default
}

export const routes: RouteRecordRaw[] = [
  { path: '/', redirect: '/tokens' },
  ...NAVIGATION.map((entry) => ({ path: entry.path, name: entry.name, component: VIEWS[entry.name as keyof typeof VIEWS], meta: { title: entry.title } })),
  { path: '/:pathMatch(.*)*', redirect: '/tokens' }
]

/**
 * Loads every view's chunk at the next idle moment, so that later switches need
 * no fetch: called once the first view's rows are in. All at once, so that
 * the loading is over before the first click rather than spread across the first clicks.
 * The routes then hold their views' components: a view's first visit is chosen
 * in the task of its click, not in one that waits for the route's chunk after a frame drawn in between.
 */
export function preloadViews(router: Router): void {
  requestIdleCallback(() => {
    const loaded = NAVIGATION.map((entry) => loadRouteLocation(router.resolve(entry.path)))
    void Promise.allSettled(loaded).then(() => markViewsPreloaded())
  })
}

let markViewsPreloaded: () => void
/** Resolves once `preloadViews` has loaded the views' chunks. */
export const viewsPreloaded = new Promise<void>((resolve) => (markViewsPreloaded = resolve))

/** Hash history: the app is loaded from a file, where path URLs cannot be resolved. */
export function createAppRouter() {
  return createRouter({ history: createWebHashHistory(), routes })
}
