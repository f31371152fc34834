import type { Pinia, PiniaPluginContext, StoreGeneric } from 'pinia'

/** The stores that outlive a lock: the vault's state, the settings the lock screen reads, and what the window announces. */
const OUTLIVE_LOCK = new Set(['vault', 'settings', 'notifications'])

const vaultDataStores = new WeakMap<Pinia, Set<StoreGeneric>>()

/** Pinia plugin: remembers each store made that holds what the window read from the vault. */
export function trackVaultData({ pinia, store }: PiniaPluginContext): void {
  if (OUTLIVE_LOCK.has(store.$id)) return
  const stores = vaultDataStores.get(pinia) ?? new Set<StoreGeneric>()
  vaultDataStores.set(pinia, stores.add(store))
}

/**
 * Forgets what the window read from the vault, once it has locked: each such store
 * (pages of tokens and log entries, a revealed plaintext, keys shown once, a bulk
 * tokenize's input and results) is disposed, which stops its timers, and its state
 * is deleted. Nothing of it stays in the window's memory, and the views of the
 * next unlock start from nothing rather than from what was on screen before.
 */
export function forgetVaultData(pinia: Pinia): void {
  for (const store of vaultDataStores.get(pinia) ?? []) {
    store.$dispose()
    delete pinia.state.value[store.$id]
  }
  vaultDataStores.delete(pinia)
}
