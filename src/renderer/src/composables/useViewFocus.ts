import { useEventListener } from '@vueuse/core'
import { nextTick, onMounted, onUnmounted, watch } from 'vue'
import { useRoute, useRouter } from 'vue-router'
import { NAVIGATION } from '@renderer/router'

export const APP_NAME = 'Tessera'

/**
 * Whether a modal dialog or drawer is open: global shortcuts must not pull the
 * view from under it. One that is closing (in its leave transition) no longer counts.
 */
export function modalOpen(): boolean {
  return document.querySelector('[aria-modal="true"]:not([class*="-leave-"])') !== null
}

/** Moves focus to the current view's heading (focusable by script only), where a screen reader starts reading. */
export function focusViewHeading(): void {
  document.querySelector<HTMLElement>('main h1')?.focus()
}

/**
 * The shell's keyboard contract: Alt+1…Alt+8 switch views (not while a dialog
 * is open), every switch puts focus on the new view's heading and names the
 * view in the window title. With `focusOnMount` (the shell replaces the
 * unlock screen, whose button had focus) focus starts on the heading; when the
 * window opens unlocked it stays at the top, where Tab reaches the skip link.
 */
export function useViewFocus(focusOnMount: () => boolean): void {
  const route = useRoute()
  const router = useRouter()

  useEventListener(window, 'keydown', (event: KeyboardEvent) => {
    if (!event.altKey || event.ctrlKey || event.metaKey) return
    const entry = NAVIGATION[Number(event.key) - 1]
    if (!entry) return
    event.preventDefault()
    if (modalOpen()) return
    if (route.path === entry.path) focusViewHeading()
    else void router.push(entry.path)
  })

  const showTitle = () => {
    const title = route.meta.title
    document.title = typeof title === 'string' ? `${title} — ${APP_NAME}` : APP_NAME
  }
  watch(
    () => route.path,
    async () => {
      showTitle()
      await nextTick()
      focusViewHeading()
    }
  )
  onMounted(async () => {
    showTitle()
    await nextTick()
    if (focusOnMount() && (document.activeElement === null || document.activeElement === document.body)) focusViewHeading()
  })
  onUnmounted(() => (document.title = APP_NAME))
}
