/**
 * Focus back where a dialog sequence started. A dialog gives focus back to
 * what had it when it opened, but after a chain (a form, then the key shown
 * once) that control is gone with the first dialog: remember the opener
 * first, restore it when the last dialog has closed, or `fallback` if the
 * opener has left the page.
 */
export function useFocusReturn(fallback: () => HTMLElement | null | undefined) {
  let opener: HTMLElement | undefined

  function remember(): void {
    const active = document.activeElement
    opener = active instanceof HTMLElement && active !== document.body ? active : undefined
  }

  function restore(): void {
    const target = opener?.isConnected ? opener : fallback()
    opener = undefined
    target?.focus()
  }

  return { remember, restore }
}
