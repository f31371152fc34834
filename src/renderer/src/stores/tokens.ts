import { defineStore } from 'pinia'
import { onScopeDispose, ref } from 'vue'
import type { TokenListQuery } from '@shared/ipc'
import type { Token } from '@shared/types'
import { api } from '@renderer/api'
import type { Pair } from '@renderer/composables/pairs'
import { useAction } from '@renderer/composables/useAction'
import { usePagedList } from '@renderer/composables/usePagedList'
import { useNotificationsStore } from './notifications'

/** How long revealed plaintext stays on screen (DESIGN §10: shown for a limited time). */
export const REVEAL_DURATION_MS = 30_000

export interface TokenFilters {
  types: string[]
  /** Token ids, one a line, each taken exactly: an id may hold spaces and commas. */
  ids: string
  metadata: Pair[]
}

export interface RevealedToken {
  id: string
  data: unknown
  /** Epoch ms at which the plaintext is dropped from memory. */
  until: number
}

function noFilters(): TokenFilters {
  return { types: [], ids: '', metadata: [] }
}

function filterQuery(filters: TokenFilters): Omit<TokenListQuery, 'page' | 'size'> {
  const ids = filters.ids.split(/\r?\n/).filter((id) => id !== '')
  const metadata = Object.fromEntries(filters.metadata.filter((m) => m.key.trim() && m.value.trim()).map((m) => [m.key.trim(), m.value.trim()]))
  return {
    ...(filters.types.length ? { type: filters.types } : {}),
    ...(ids.length ? { id: ids } : {}),
    ...(Object.keys(metadata).length ? { metadata } : {})
  }
}

/**
 * The masked token browser: filters, one server-side page, the selected token
 * and, briefly, one revealed plaintext.
 */
export const useTokensStore = defineStore('tokens', () => {
  const list = usePagedList<Token, TokenFilters>({
    name: 'Loading tokens',
    noun: ['token', 'tokens'],
    filters: noFilters,
    fetch: (paging, filters) => api().tokens.list({ ...paging, ...filterQuery(filters) })
  })
  const { run } = useAction()
  const notifications = useNotificationsStore()
  /** The token shown in the detail panel (masked). */
  const selected = ref<Token>()
  /** Plaintext of one token, dropped after REVEAL_DURATION_MS or when hidden. */
  const revealed = ref<RevealedToken>()
  let hideTimer: ReturnType<typeof setTimeout> | undefined
  // The store is disposed when the vault locks (vaultData.ts): the plaintext goes at once, not when its timer ends.
  onScopeDispose(dropPlaintext)

  async function select(id: string): Promise<void> {
    await run('Opening the token', async () => {
      selected.value = await api().tokens.get(id)
    })
  }

  function closeDetail(): void {
    selected.value = undefined
    hide()
  }

  async function create(body: Record<string, unknown>): Promise<Token | undefined> {
    let created: Token | undefined
    await run(
      'Creating the token',
      async () => {
        created = await api().tokens.create(body)
        return created
      },
      { success: (token) => ({ title: 'Token created', detail: token.id }), after: list.search }
    )
    return created
  }

  function update(id: string, patch: Record<string, unknown>): Promise<boolean> {
    return run(
      'Updating the token',
      async () => {
        const token = await api().tokens.update(id, patch)
        if (selected.value?.id === id) selected.value = token
      },
      { success: () => ({ title: 'Token updated' }), after: list.load }
    )
  }

  function remove(id: string): Promise<boolean> {
    return run(
      'Deleting the token',
      async () => {
        await api().tokens.delete(id)
        if (selected.value?.id === id) closeDetail()
      },
      { success: () => ({ title: 'Token deleted', detail: 'Its data is erased; the audit log keeps a reference.' }), after: list.load }
    )
  }

  /** Asks main for the plaintext (logged with `reason`) and keeps it for a limited time only. */
  function reveal(id: string, reason: string): Promise<boolean> {
    return run('Revealing the token', async () => {
      const token = await api().tokens.reveal(id, reason)
      dropPlaintext()
      revealed.value = { id, data: token.data, until: Date.now() + REVEAL_DURATION_MS }
      hideTimer = setTimeout(hide, REVEAL_DURATION_MS)
      notifications.announce(`Plaintext shown for ${REVEAL_DURATION_MS / 1000} seconds`)
    })
  }

  /** Drops the plaintext (the button, the timer, closing the panel), and says so once. */
  function hide(): void {
    if (!revealed.value) return
    dropPlaintext()
    notifications.announce('Plaintext hidden')
  }

  function dropPlaintext(): void {
    if (hideTimer) clearTimeout(hideTimer)
    hideTimer = undefined
    revealed.value = undefined
  }

  return { ...list, selected, revealed, select, closeDetail, create, update, remove, reveal, hide }
})
