import { useEventListener } from '@vueuse/core'
import { nextTick } from 'vue'

/**
 * naive-ui draws two controls as bare <div>s that a keyboard cannot reach: the
 * items of every table's pager and the eye of password fields.
 * `labelKeyboardWidgets` makes them buttons wherever they appear in the window
 * (focusable, named); the window's one observer (`watchNaiveAria`) runs it as
 * naive-ui renders. `useKeyboardWidgets` presses them with Enter or Space, and
 * keeps focus on the pager when a press redraws it.
 */
const PAGER_ITEM = '.n-pagination-item'
const PASSWORD_EYE = '.n-input__eye'

function makeButton(element: Element, label: string, disabled = false): void {
  element.setAttribute('role', 'button')
  element.setAttribute('tabindex', disabled ? '-1' : '0')
  element.setAttribute('aria-label', label)
  if (disabled) element.setAttribute('aria-disabled', 'true')
  else element.removeAttribute('aria-disabled')
}

function labelPager(pager: Element): void {
  const items = [...pager.querySelectorAll(PAGER_ITEM)]
  const activeIndex = items.findIndex((item) => item.classList.contains('n-pagination-item--active'))
  items.forEach((item, index) => {
    const disabled = item.classList.contains('n-pagination-item--disabled')
    const page = item.textContent?.trim() ?? ''
    if (index === 0) makeButton(item, 'Previous page', disabled)
    else if (index === items.length - 1) makeButton(item, 'Next page', disabled)
    else if (/^\d+$/.test(page)) makeButton(item, `Page ${page}`, disabled)
    else makeButton(item, index < activeIndex ? 'Earlier pages' : 'Later pages', disabled)
    if (index === activeIndex) item.setAttribute('aria-current', 'page')
    else item.removeAttribute('aria-current')
  })
}

function labelEye(eye: Element): void {
  const shown = eye.closest('.n-input')?.querySelector('input')?.getAttribute('type') === 'text'
  makeButton(eye, shown ? 'Hide password' : 'Show password')
  eye.setAttribute('aria-pressed', String(shown))
}

export function labelKeyboardWidgets(root: Element): void {
  root.querySelectorAll('.n-pagination').forEach(labelPager)
  root.querySelectorAll(PASSWORD_EYE).forEach(labelEye)
}

/** After a pager item was pressed, focus the same item again (or the current page, if it is gone or disabled). */
async function keepFocusOnPager(pager: Element, label: string): Promise<void> {
  await nextTick()
  requestAnimationFrame(() => {
    if (pager.contains(document.activeElement)) return
    const same = pager.querySelector<HTMLElement>(`${PAGER_ITEM}[aria-label="${label}"]:not([aria-disabled])`)
    ;(same ?? pager.querySelector<HTMLElement>(`${PAGER_ITEM}[aria-current="page"]`))?.focus()
  })
}

export function useKeyboardWidgets(): void {
  const root = document.body
  useEventListener(root, 'keydown', (event: KeyboardEvent) => {
    if (event.key !== 'Enter' && event.key !== ' ') return
    const target = event.target instanceof HTMLElement ? event.target : undefined
    const control = target?.closest<HTMLElement>(`${PAGER_ITEM}, ${PASSWORD_EYE}`)
    if (!control || control !== target || control.getAttribute('aria-disabled') === 'true') return
    event.preventDefault()
    event.stopPropagation()
    control.click()
    const pager = control.closest('.n-pagination')
    if (pager) void keepFocusOnPager(pager, control.getAttribute('aria-label') ?? '')
  })
}
