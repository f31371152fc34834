import { onBeforeRouteLeave } from 'vue-router'

/**
 * For a view the shell keeps while another shows (KeepAlive in AppShell.vue).
 * Its own elements leave the document with it, but what it opened over the
 * page is teleported to the body and would stay there, over the next view:
 * as the route leaves, `closeOverlays` closes its drawers, dialogs and
 * popovers, and the focused control is let go, so that a select whose menu is
 * open closes it (its menus are made only while open: `display-directive="if"`).
 */
export function useKeptView(closeOverlays: () => void): void {
  onBeforeRouteLeave(() => {
    const focused = document.activeElement
    if (focused instanceof HTMLElement) focused.blur()
    closeOverlays()
  })
}
