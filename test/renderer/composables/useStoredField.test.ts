import { describe, expect, it } from 'vitest'
import { nextTick, ref } from 'vue'
import { useStoredField } from '@renderer/composables/useStoredField'

interface Stored {
  minutes: number
}

describe('useStoredField', () => {
  it('shows the stored value, and the one read later while the field is untouched', async () => {
    const stored = ref<Stored>()
    const minutes = useStoredField(() => stored.value?.minutes ?? null)
    expect(minutes.value).toBeNull()
    stored.value = { minutes: 15 }
    await nextTick()
    expect(minutes.value).toBe(15)
    stored.value = { minutes: 20 }
    await nextTick()
    expect(minutes.value).toBe(20)
  })

  it('keeps what the user typed when the stored value is read again, or changes', async () => {
    const stored = ref<Stored>({ minutes: 15 })
    const minutes = useStoredField(() => stored.value.minutes)
    minutes.value = 2
    stored.value = { minutes: 15 }
    await nextTick()
    expect(minutes.value).toBe(2)
    stored.value = { minutes: 30 }
    await nextTick()
    expect(minutes.value).toBe(2)
  })

  it('follows the stored value again once it holds what the user typed (it was saved)', async () => {
    const stored = ref<Stored>({ minutes: 15 })
    const minutes = useStoredField(() => stored.value.minutes)
    minutes.value = 25
    stored.value = { minutes: 25 }
    await nextTick()
    stored.value = { minutes: 40 }
    await nextTick()
    expect(minutes.value).toBe(40)
  })
})
