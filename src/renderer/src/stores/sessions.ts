import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { AuthorizeSessionRequest } from '@shared/ipc'
import type { Application, Session } from '@shared/types'
import { api } from '@renderer/api'
import { useApplicationsStore } from './applications'
import { useNotificationsStore } from './notifications'

/** The key and nonce of a session made from this window; shown nowhere else, kept in memory only. */
export interface TrialSecrets {
  sessionKey: string
  nonce: string
}

export const SESSIONS_PAGE_SIZE = 20

/**
 * The tenant's active sessions, listed from the service (revocable), and the
 * create-and-authorize flow for testing and training.
 */
export const useSessionsStore = defineStore('sessions', () => {
  const publicApplications = ref<Application[]>([])
  const privateApplications = ref<Application[]>([])
  const sessions = ref<Session[]>([])
  const total = ref(0)
  const page = ref(1)
  /** By session id. */
  const secrets = ref<Record<string, TrialSecrets>>({})
  const busy = ref(false)

  async function attempt<T>(action: string, work: () => Promise<T>): Promise<T | undefined> {
    busy.value = true
    try {
      return await work()
    } catch (error) {
      useNotificationsStore().reportError(error, action)
      return undefined
    } finally {
      busy.value = false
    }
  }

  async function loadApplications(): Promise<void> {
    const applications = useApplicationsStore()
    ;[publicApplications.value, privateApplications.value] = await Promise.all([applications.listOfType('public'), applications.listOfType('private')])
  }

  /** Reads one page of active sessions (the service logs the listing). */
  async function load(pageNumber = page.value): Promise<void> {
    const result = await attempt('Loading sessions', () => api().sessions.list({ page: pageNumber, size: SESSIONS_PAGE_SIZE }))
    if (!result) return
    // The last session of a later page was revoked or expired: show the page before.
    if (result.data.length === 0 && pageNumber > 1) return load(pageNumber - 1)
    page.value = pageNumber
    sessions.value = result.data
    total.value = result.pagination.total_items
  }

  /** The name of an application of this tenant, or its id when it is not (or no longer) known. */
  function applicationName(id: string | undefined): string {
    if (!id) return '—'
    return [...publicApplications.value, ...privateApplications.value].find((application) => application.id === id)?.name ?? id
  }

  async function create(applicationId: string): Promise<TrialSecrets | undefined> {
    const created = await attempt('Creating the session', () => api().sessions.create(applicationId))
    if (!created) return undefined
    const trial = { sessionKey: created.session_key, nonce: created.nonce }
    secrets.value = { ...secrets.value, [created.id]: trial }
    await load(1)
    return trial
  }

  async function authorize(nonce: string, applicationId: string, grant: Omit<AuthorizeSessionRequest, 'nonce'>): Promise<boolean> {
    const done = await attempt('Authorizing the session', async () => (await api().sessions.authorize(applicationId, { nonce, ...grant }), true))
    if (!done) return false
    useNotificationsStore().notify('Session authorized', 'Its key now works with the granted access until it expires or is revoked.')
    await load()
    return true
  }

  /** Ends a session at once; its key is refused from then on. */
  async function revoke(session: Session): Promise<boolean> {
    const done = await attempt('Revoking the session', async () => (await api().sessions.revoke(session.id), true))
    if (!done) return false
    const { [session.id]: _forgotten, ...rest } = secrets.value
    secrets.value = rest
    useNotificationsStore().notify('Session revoked', 'Its key is refused from now on.')
    await load()
    return true
  }

  return { publicApplications, privateApplications, sessions, total, page, secrets, busy, loadApplications, load, applicationName, create, authorize, revoke }
})
