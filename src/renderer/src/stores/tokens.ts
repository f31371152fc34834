import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import type { TokenListQuery } from '@shared/ipc'
import type { Token } from '@shared/types'
import { api } from '@renderer/api'
import type { Pair } from '@renderer/composables/pairs'
import { useNotificationsStore } from './notifications'

/** How long revealed plaintext stays on screen (DESIGN §10: shown for a limited time). */
export const REVEAL_DURATION_MS = 30_000

export interface TokenFilters {
  types: string[]
  /** Token ids, separated by commas, spaces or new lines. */
  ids: string
  metadata: Pair[]
}

export interface RevealedToken {
  id: string
  data: unknown
  /** Epoch ms at which the plaintext is dropped from memory. */
  until: number
}

/**
 * The masked token browser: filters, one server-side page, the selected token
 * and, briefly, one revealed plaintext.
 */
export const useTokensStore = defineStore('tokens', () => {
  const filters = ref<TokenFilters>({ types: [], ids: '', metadata: [] })
  const page = ref(1)
  const size = ref(20)
  const total = ref(0)
  const items = ref<Token[]>([])
  const loading = ref(false)
  /** The token shown in the detail panel (masked). */
  const selected = ref<Token>()
  /** Plaintext of one token, dropped after REVEAL_DURATION_MS or when hidden. */
  const revealed = ref<RevealedToken>()
  let hideTimer: ReturnType<typeof setTimeout> | undefined

  const pageCount = computed(() => Math.max(1, Math.ceil(total.value / size.value)))

  function query(): TokenListQuery {
    const ids = filters.value.ids.split(/[\s,]+/).filter(Boolean)
    const metadata = Object.fromEntries(filters.value.metadata.filter((m) => m.key.trim() && m.value.trim()).map((m) => [m.key.trim(), m.value.trim()]))
    return {
      page: page.value,
      size: size.value,
      ...(filters.value.types.length ? { type: filters.value.types } : {}),
      ...(ids.length ? { id: ids } : {}),
      ...(Object.keys(metadata).length ? { metadata } : {})
    }
  }

  async function load(): Promise<void> {
    loading.value = true
    try {
      const result = await api().tokens.list(query())
      items.value = result.data
      total.value = result.pagination.total_items
      if (page.value > 1 && result.data.length === 0 && total.value > 0) {
        page.value = Math.ceil(total.value / size.value)
        await load()
      }
    } catch (error) {
      useNotificationsStore().reportError(error, 'Loading tokens')
    } finally {
      loading.value = false
    }
  }

  /** Applies the filters from the first page. */
  function search(): Promise<void> {
    page.value = 1
    return load()
  }

  function resetFilters(): Promise<void> {
    filters.value = { types: [], ids: '', metadata: [] }
    return search()
  }

  async function select(id: string): Promise<void> {
    try {
      selected.value = await api().tokens.get(id)
    } catch (error) {
      useNotificationsStore().reportError(error, 'Opening the token')
    }
  }

  function closeDetail(): void {
    selected.value = undefined
    hide()
  }

  async function create(body: Record<string, unknown>): Promise<Token | undefined> {
    try {
      const token = await api().tokens.create(body)
      useNotificationsStore().notify('Token created', token.id)
      await search()
      return token
    } catch (error) {
      useNotificationsStore().reportError(error, 'Creating the token')
      return undefined
    }
  }

  async function update(id: string, patch: Record<string, unknown>): Promise<boolean> {
    try {
      const token = await api().tokens.update(id, patch)
      if (selected.value?.id === id) selected.value = token
      useNotificationsStore().notify('Token updated')
      await load()
      return true
    } catch (error) {
      useNotificationsStore().reportError(error, 'Updating the token')
      return false
    }
  }

  async function remove(id: string): Promise<boolean> {
    try {
      await api().tokens.delete(id)
      if (selected.value?.id === id) closeDetail()
      useNotificationsStore().notify('Token deleted', 'Its data is erased; the audit log keeps a reference.')
      await load()
      return true
    } catch (error) {
      useNotificationsStore().reportError(error, 'Deleting the token')
      return false
    }
  }

  /** Asks main for the plaintext (logged with `reason`) and keeps it for a limited time only. */
  async function reveal(id: string, reason: string): Promise<boolean> {
    try {
      const token = await api().tokens.reveal(id, reason)
      hide()
      revealed.value = { id, data: token.data, until: Date.now() + REVEAL_DURATION_MS }
      hideTimer = setTimeout(hide, REVEAL_DURATION_MS)
      return true
    } catch (error) {
      useNotificationsStore().reportError(error, 'Revealing the token')
      return false
    }
  }

  function hide(): void {
    if (hideTimer) clearTimeout(hideTimer)
    hideTimer = undefined
    revealed.value = undefined
  }

  return {
    filters,
    page,
    size,
    total,
    items,
    loading,
    selected,
    revealed,
    pageCount,
    load,
    search,
    resetFilters,
    select,
    closeDetail,
    create,
    update,
    remove,
    reveal,
    hide
  }
})
