import { useMediaQuery } from '@vueuse/core'

/**
 * True in a window wide enough for the tables' secondary columns (token
 * containers and expiry, application creation): a 1280-pixel screen has room
 * for the essential ones only, and the rest stays in the detail views.
 */
export function useWideWindow() {
  return useMediaQuery('(min-width: 1600px)')
}
