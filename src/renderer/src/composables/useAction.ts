import { computed, ref } from 'vue'
import { useNotificationsStore } from '@renderer/stores/notifications'

/** A success toast. */
export interface Toast {
  title: string
  detail?: string
}

export interface ActionOptions<T> {
  /** The toast announcing success, from what the work returned; none when left out. */
  success?: (result: T) => Toast
  /** Runs after a success, before `run` resolves: typically reads the list again. */
  after?: () => Promise<unknown>
  /** Called with the error once it has been reported, for a caller that also shows it in place. */
  failed?: (error: unknown) => void
  /** True for an error the caller shows in place (a form at its fields): announced, but no toast covering the form. */
  shownInPlace?: (error: unknown) => boolean
}

/**
 * The one way the window runs a call to the main process: a failure becomes
 * an error toast titled "`name` failed" with the problem's detail and field
 * errors, a success may announce itself, and `busy` is true while any action
 * of this instance runs. `run` resolves to whether the work succeeded, and
 * never rejects.
 */
export function useAction() {
  const running = ref(0)
  const busy = computed(() => running.value > 0)

  async function run<T>(name: string, work: () => Promise<T>, options: ActionOptions<T> = {}): Promise<boolean> {
    const notifications = useNotificationsStore()
    running.value++
    try {
      const result = await work()
      if (options.success) {
        const { title, detail } = options.success(result)
        notifications.notify(title, detail)
      }
      await options.after?.()
      return true
    } catch (error) {
      notifications.reportError(error, name, { toast: !options.shownInPlace?.(error) })
      options.failed?.(error)
      return false
    } finally {
      running.value--
    }
  }

  return { busy, run }
}
