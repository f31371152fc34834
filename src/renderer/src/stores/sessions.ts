import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { AuthorizeSessionRequest } from '@shared/ipc'
import type { Application, Session } from '@shared/types'
import { api } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'
import { usePagedList } from '@renderer/composables/usePagedList'
import { useApplicationsStore } from './applications'

/** The key and nonce of a session made from this window; shown nowhere else, kept in memory only. */
export interface TrialSecrets {
  sessionKey: string
  nonce: string
}

/**
 * The tenant's active sessions, listed from the service (revocable), and the
 * create-and-authorize flow for testing and training.
 */
export const useSessionsStore = defineStore('sessions', () => {
  // The service logs each listing.
  const list = usePagedList<Session>({
    name: 'Loading sessions',
    noun: ['session', 'sessions'],
    fetch: (paging) => api().sessions.list(paging)
  })
  const { busy, run } = useAction()
  const publicApplications = ref<Application[]>([])
  const privateApplications = ref<Application[]>([])
  /** By session id. */
  const secrets = ref<Record<string, TrialSecrets>>({})

  async function loadApplications(): Promise<void> {
    const applications = useApplicationsStore()
    ;[publicApplications.value, privateApplications.value] = await Promise.all([applications.listOfType('public'), applications.listOfType('private')])
  }

  /** The name of an application of this tenant, or its id when it is not (or no longer) known. */
  function applicationName(id: string | undefined): string {
    if (!id) return '—'
    return [...publicApplications.value, ...privateApplications.value].find((application) => application.id === id)?.name ?? id
  }

  /** Opens a session as a public application; its secrets stay in this window, and the list shows it first. */
  async function create(applicationId: string): Promise<TrialSecrets | undefined> {
    let trial: TrialSecrets | undefined
    await run(
      'Creating the session',
      async () => {
        const created = await api().sessions.create(applicationId)
        trial = { sessionKey: created.session_key, nonce: created.nonce }
        secrets.value = { ...secrets.value, [created.id]: trial }
      },
      { after: list.search }
    )
    return trial
  }

  function authorize(nonce: string, applicationId: string, grant: Omit<AuthorizeSessionRequest, 'nonce'>): Promise<boolean> {
    return run('Authorizing the session', () => api().sessions.authorize(applicationId, { nonce, ...grant }), {
      success: () => ({ title: 'Session authorized', detail: 'Its key now works with the granted access until it expires or is revoked.' }),
      after: list.load
    })
  }

  /** Ends a session at once; its key is refused from then on. */
  function revoke(session: Session): Promise<boolean> {
    return run(
      'Revoking the session',
      async () => {
        await api().sessions.revoke(session.id)
        const { [session.id]: _forgotten, ...rest } = secrets.value
        secrets.value = rest
      },
      { success: () => ({ title: 'Session revoked', detail: 'Its key is refused from now on.' }), after: list.load }
    )
  }

  return { ...list, busy, publicApplications, privateApplications, secrets, loadApplications, applicationName, create, authorize, revoke }
})
