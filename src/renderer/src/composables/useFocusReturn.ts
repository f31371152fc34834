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
    // The action behind the dialog may redraw the opener's row once its data reloads, taking focus with it.
    for (const delay of [100, 500, 1500]) setTimeout(() => void focusIfLost(fallback), delay)
  }

  return { remember, restore }
}

/**
 * Focus on `target` if focus is nowhere once the current dialog has left the
 * page: after a dialog whose opener the action disabled or removed, and only
 * then, so that focus the user has moved meanwhile stays where they put it.
 */
export async function focusIfLost(target: () => HTMLElement | null | undefined): Promise<void> {
  // Called as a dialog finishes leaving: it still holds focus until it is taken out of the page, a task later.
  await new Promise((resolve) => setTimeout(resolve))
  const active = document.activeElement
  if (!active || active === document.body || !active.isConnected) target()?.focus()
}
