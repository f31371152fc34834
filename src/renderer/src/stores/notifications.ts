import { createEventHook } from '@vueuse/core'
import { defineStore } from 'pinia'
import { ref } from 'vue'
import { describeError, ProblemError } from '@renderer/api'

export interface Notice {
  id: number
  kind: 'error' | 'success' | 'info'
  title: string
  detail?: string
  /** Field errors of a 400 problem, `path: message`. */
  fields?: string[]
}

/**
 * Toasts waiting to be shown. Actions report here (`useAction`: stores cannot
 * reach naive-ui's providers); `ProblemToaster.vue` shows and drains the queue.
 * It imports no other store: the vault store listens to `onVaultLocked`.
 */
export const useNotificationsStore = defineStore('notifications', () => {
  /** Notices not yet shown. */
  const queue = ref<Notice[]>([])
  const vaultLocked = createEventHook<void>()
  let nextId = 1

  /** Queues an error toast with the problem's detail and field errors. */
  function reportError(error: unknown, action?: string): void {
    // The vault was locked behind this window's back (another action, a failed restart): the vault store shows the unlock screen.
    if (error instanceof ProblemError && error.problem.code === 'vault_locked') void vaultLocked.trigger()
    const { title, detail, fields } = describeError(error)
    queue.value.push({ id: nextId++, kind: 'error', title: action ? `${action} failed` : title, detail, fields })
  }

  function notify(title: string, detail?: string, kind: Notice['kind'] = 'success'): void {
    queue.value.push({ id: nextId++, kind, title, detail })
  }

  /** Removes and returns everything queued. */
  function drain(): Notice[] {
    const notices = queue.value
    queue.value = []
    return notices
  }

  return { queue, reportError, notify, drain, onVaultLocked: vaultLocked.on }
})
