import { useNow } from '@vueuse/core'
import { computed, type MaybeRefOrGetter, toValue } from 'vue'
import { formatCountdown } from './format'

/** Time left until `deadline` (epoch ms or ISO), ticking every second. */
export function useCountdown(deadline: MaybeRefOrGetter<number | string | undefined>) {
  const now = useNow({ interval: 1000 })
  const remainingMs = computed(() => {
    const value = toValue(deadline)
    if (value === undefined) return 0
    const end = typeof value === 'number' ? value : Date.parse(value)
    return Math.max(0, end - now.value.getTime())
  })
  const expired = computed(() => remainingMs.value === 0)
  const label = computed(() => formatCountdown(remainingMs.value))
  return { remainingMs, expired, label }
}
