import { useTimeoutFn } from '@vueuse/core'
import { ref } from 'vue'
import { api } from '@renderer/api'
import { useNotificationsStore } from '@renderer/stores/notifications'

/**
 * Copies a secret (a key, a nonce, an invitation link) through the main
 * process, which takes it off the system clipboard 30 seconds later unless
 * something else was copied since. `copied` is true for a moment after a copy.
 */
export function useSecretClipboard(copiedDuring = 1500) {
  const copied = ref(false)
  const { start } = useTimeoutFn(() => (copied.value = false), copiedDuring, { immediate: false })

  async function copy(text: string): Promise<boolean> {
    try {
      await api().clipboard.copySecret(text)
    } catch (error) {
      useNotificationsStore().reportError(error, 'Copying')
      return false
    }
    copied.value = true
    start()
    return true
  }

  return { copy, copied }
}
