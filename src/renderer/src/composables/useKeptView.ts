import { onActivated, onDeactivated, onUnmounted, watch } from 'vue'
import { useRoute, useRouter } from 'vue-router'
import { takeRouteRead } from '@renderer/routeReads'

/**
 * For a view the shell keeps while another shows (KeepAlive in AppShell.vue).
 * Its own elements leave the document with it, but what it opened over the
 * page is teleported to the body and would stay there, over the next view:
 * as the route leaves it, `closeOverlays` closes its drawers, dialogs and
 * popovers, and the focused control is let go, so that a select whose menu is
 * open closes it (its menus are made only while open: `display-directive="if"`).
 *
 * A global guard, not `onBeforeRouteLeave`: the shell may make the view ahead
 * of its first visit, while another route shows, and that guard would be tied
 * to that other route.
 */
export function useKeptView(closeOverlays: () => void): void {
  let shown = false
  onActivated(() => (shown = true))
  onDeactivated(() => (shown = false))
  const removeGuard = useRouter().beforeEach((to, from) => {
    if (!shown || to.name === from.name) return
    const focused = document.activeElement
    if (focused instanceof HTMLElement) focused.blur()
    closeOverlays()
  })
  onUnmounted(removeGuard)
}

/**
 * The view's first read, as the view is set up on its route `name`; for a view
 * the shell made ahead while another route showed, once its route is chosen: a
 * view made ahead reads nothing. The read the route asked for as it was chosen
 * is taken instead when there is one, answered or not; `read` is called
 * otherwise. `then` runs once the first read has answered.
 */
export function readWhenShown(name: string, read: () => Promise<unknown>, then?: () => void): void {
  const readFirst = () => {
    const first = takeRouteRead(name) ?? read()
    if (then) void first.finally(then)
  }
  const route = useRoute()
  if (route.name === name) {
    readFirst()
    return
  }
  const stop = watch(
    () => route.name,
    (shown) => {
      if (shown !== name) return
      stop()
      readFirst()
    }
  )
}
