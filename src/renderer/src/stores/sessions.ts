import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { AuthorizeSessionRequest } from '@shared/ipc'
import type { Application } from '@shared/types'
import { api } from '@renderer/api'
import { useApplicationsStore } from './applications'
import { useNotificationsStore } from './notifications'

/** A session made from this window, for testing and training; kept in memory only. */
export interface TrialSession {
  nonce: string
  sessionKey: string
  applicationName: string
  expiresAt: string
  authorizedBy?: string
}

/** Create sessions as a public application and authorize them as a private one. */
export const useSessionsStore = defineStore('sessions', () => {
  const publicApplications = ref<Application[]>([])
  const privateApplications = ref<Application[]>([])
  const sessions = ref<TrialSession[]>([])
  const busy = ref(false)

  async function loadApplications(): Promise<void> {
    const applications = useApplicationsStore()
    ;[publicApplications.value, privateApplications.value] = await Promise.all([applications.listOfType('public'), applications.listOfType('private')])
  }

  async function create(applicationId: string): Promise<TrialSession | undefined> {
    busy.value = true
    try {
      const created = await api().sessions.create(applicationId)
      const session: TrialSession = {
        nonce: created.nonce,
        sessionKey: created.session_key,
        applicationName: publicApplications.value.find((a) => a.id === applicationId)?.name ?? applicationId,
        expiresAt: created.expires_at
      }
      sessions.value = [session, ...sessions.value]
      return session
    } catch (error) {
      useNotificationsStore().reportError(error, 'Creating the session')
      return undefined
    } finally {
      busy.value = false
    }
  }

  async function authorize(nonce: string, applicationId: string, grant: Omit<AuthorizeSessionRequest, 'nonce'>): Promise<boolean> {
    busy.value = true
    try {
      await api().sessions.authorize(applicationId, { nonce, ...grant })
      const by = privateApplications.value.find((a) => a.id === applicationId)?.name ?? applicationId
      sessions.value = sessions.value.map((s) => (s.nonce === nonce ? { ...s, authorizedBy: by, expiresAt: grant.expires_at ?? s.expiresAt } : s))
      useNotificationsStore().notify('Session authorized', `Its key now works with the granted access until it expires.`)
      return true
    } catch (error) {
      useNotificationsStore().reportError(error, 'Authorizing the session')
      return false
    } finally {
      busy.value = false
    }
  }

  /** Forgets sessions whose expiry has passed (the service has deleted them). */
  function dropExpired(now = Date.now()): void {
    sessions.value = sessions.value.filter((s) => Date.parse(s.expiresAt) > now)
  }

  return { publicApplications, privateApplications, sessions, busy, loadApplications, create, authorize, dropExpired }
})
