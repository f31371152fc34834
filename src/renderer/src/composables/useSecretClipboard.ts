import { useTimeoutFn } from '@vueuse/core'
import { ref } from 'vue'
import { api } from '@renderer/api'
import { useAction } from './useAction'

/**
 * Copies a secret (a key, a nonce, an invitation link) through the main
 * process, which takes it off the system clipboard 30 seconds later unless
 * something else was copied since. `copied` is true for a moment after a copy.
 */
export function useSecretClipboard(copiedDuring = 1500) {
  const copied = ref(false)
  const { start } = useTimeoutFn(() => (copied.value = false), copiedDuring, { immediate: false })
  const { run } = useAction()

  async function copy(text: string): Promise<boolean> {
    const done = await run('Copying', () => api().clipboard.copySecret(text))
    if (done) {
      copied.value = true
      start()
    }
    return done
  }

  return { copy, copied }
}
