import { createRouter, createWebHashHistory, type RouteRecordRaw } from 'vue-router'
import ApplicationsView from './views/ApplicationsView.vue'
import LogsView from './views/LogsView.vue'
import MembersView from './views/MembersView.vue'
import SessionsView from './views/SessionsView.vue'
import SettingsView from './views/SettingsView.vue'
import TokenizeView from './views/TokenizeView.vue'
import TokensView from './views/TokensView.vue'
import WebhooksView from './views/WebhooksView.vue'
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

const VIEWS = {
  tokens: TokensView,
  tokenize: TokenizeView,
  logs: LogsView,
  applications: ApplicationsView,
  sessions: SessionsView,
  members: MembersView,
  settings: SettingsView,
  webhooks: WebhooksView
}

export const routes: RouteRecordRaw[] = [
  { path: '/', redirect: '/tokens' },
  ...NAVIGATION.map((entry) => ({ path: entry.path, name: entry.name, component: VIEWS[entry.name as keyof typeof VIEWS], meta: { title: entry.title } })),
  { path: '/:pathMatch(.*)*', redirect: '/tokens' }
]

/** Hash history: the app is loaded from a file, where path URLs cannot be resolved. */
export function createAppRouter() {
  return createRouter({ history: createWebHashHistory(), routes })
}
