import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { WebhookRequest } from '@shared/ipc'
import type { Problem, Webhook } from '@shared/types'
import { api, ProblemError } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'
import { usePagedList } from '@renderer/composables/usePagedList'

/** The tenant's webhooks and the event types they may subscribe to. */
export const useWebhooksStore = defineStore('webhooks', () => {
  const list = usePagedList<Webhook>({
    name: 'Loading webhooks',
    noun: ['webhook', 'webhooks'],
    fetch: (paging) => api().webhooks.list(paging)
  })
  const { run } = useAction()
  const eventTypes = ref<string[]>([])
  /** Why the service refused the form last sent, for the form to show at the fields it names. */
  const formProblem = ref<Problem>()

  /** Reads the list and, once, the event-type catalogue for the form. */
  async function load(): Promise<boolean> {
    if (!eventTypes.value.length) await run('Loading event types', async () => (eventTypes.value = await api().webhooks.eventTypes()))
    return list.load()
  }

  const keepProblem = (error: unknown) => (formProblem.value = error instanceof ProblemError ? error.problem : undefined)
  /** The form shows the service's problems (a bad field, the webhook limit); anything else is toasted. */
  const formShows = (error: unknown) => error instanceof ProblemError && error.status < 500 && error.problem.code !== 'vault_locked'

  function clearProblem(): void {
    formProblem.value = undefined
  }

  function create(body: WebhookRequest): Promise<boolean> {
    clearProblem()
    return run('Creating the webhook', () => api().webhooks.create(body), {
      success: (webhook) => ({ title: 'Webhook created', detail: `${webhook.name} receives its events from now on.` }),
      after: list.load,
      failed: keepProblem, shownInPlace: formShows
    })
  }

  function update(id: string, body: WebhookRequest): Promise<boolean> {
    clearProblem()
    return run('Saving the webhook', () => api().webhooks.update(id, body), { success: () => ({ title: 'Webhook saved' }), after: list.load, failed: keepProblem, shownInPlace: formShows })
  }

  function remove(webhook: Webhook): Promise<boolean> {
    return run('Deleting the webhook', () => api().webhooks.delete(webhook.id), {
      success: () => ({ title: 'Webhook deleted', detail: `${webhook.name} receives no more events; its delivery log is gone too.` }),
      after: list.load
    })
  }

  return { ...list, load, eventTypes, formProblem, clearProblem, create, update, remove }
})
