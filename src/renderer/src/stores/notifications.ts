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

/** A sentence for screen readers: polite ones wait for a pause, assertive ones (errors) interrupt. */
export interface Announcement {
  id: number
  text: string
  politeness: 'polite' | 'assertive'
}

/**
 * Toasts waiting to be shown, and the latest announcement (`LiveAnnouncer.vue`
 * speaks it: every toast, and what a toast does not say, such as a reveal). Actions report here (`useAction`: stores cannot
 * reach naive-ui's providers); `ProblemToaster.vue` shows and drains the queue.
 * It imports no other store: the vault store listens to `onVaultLocked`.
 */
export const useNotificationsStore = defineStore('notifications', () => {
  /** Notices not yet shown. */
  const queue = ref<Notice[]>([])
  const announcement = ref<Announcement>()
  const vaultLocked = createEventHook<void>()
  let nextId = 1

  /**
   * Queues an error toast with the problem's detail and field errors; with
   * `toast: false` (a form that shows the problem at its fields) it is only announced.
   */
  function reportError(error: unknown, action?: string, { toast = true }: { toast?: boolean } = {}): void {
    // The vault was locked behind this window's back (another action, a failed restart): the vault store shows the unlock screen.
    if (error instanceof ProblemError && error.problem.code === 'vault_locked') void vaultLocked.trigger()
    const { title, detail, fields } = describeError(error)
    if (toast) queue.value.push({ id: nextId++, kind: 'error', title: action ? `${action} failed` : title, detail, fields })
    announce(sentences(action ? `${action} failed` : title, detail), 'assertive')
  }

  function notify(title: string, detail?: string, kind: Notice['kind'] = 'success'): void {
    queue.value.push({ id: nextId++, kind, title, detail })
    announce(sentences(title, detail), kind === 'error' ? 'assertive' : 'polite')
  }

  /** Has screen readers say `text` once. */
  function announce(text: string, politeness: Announcement['politeness'] = 'polite'): void {
    announcement.value = { id: nextId++, text, politeness }
  }

  /** Removes and returns everything queued. */
  function drain(): Notice[] {
    const notices = queue.value
    queue.value = []
    return notices
  }

  return { queue, announcement, reportError, notify, announce, drain, onVaultLocked: vaultLocked.on }
})

function sentences(title: string, detail?: string): string {
  return detail ? `${title}. ${detail}` : title
}
