/**
 * Repairs what naive-ui (2.45) renders that assistive technology cannot use,
 * and that no prop or theme override reaches:
 *
 * - card headers are a role="heading" nested in a role="heading", neither with a level;
 * - modals, drawers and dialogs (role="dialog") have no accessible name;
 * - a select's keyboard focus target is a bare <div>: no role, no name, no state,
 *   and its menu is no listbox of options;
 * - a form item's <label> is not tied to its input, so the placeholder is read instead;
 * - a table body that scrolls cannot be reached from the keyboard.
 *
 * `watchNaiveAria` runs `repairNaiveAria` on the document whenever naive-ui
 * renders something new (a view, a modal, a menu), so components stay plain;
 * the same observer keeps the pagers and password eyes keyboard buttons
 * (`labelKeyboardWidgets`).
 */
import { labelKeyboardWidgets } from './useKeyboardWidgets'

/** Where each kind of dialog keeps its title. */
const DIALOG_TITLES = ['.n-card-header__main', '.n-dialog__title', '.n-drawer-header__main']

/** The element a select or date picker takes keyboard focus on, or a plain text field. */
const CONTROLS = ['input:not([type="hidden"]):not([type="file"]):not([type="checkbox"]):not([type="radio"])', 'textarea', '.n-base-selection-label[tabindex]', '.n-base-selection-tags[tabindex]']
const CONTROL_SELECTOR = CONTROLS.join(', ')

let nextId = 1

function idOf(element: Element): string {
  if (!element.id) element.id = `naive-aria-${nextId++}`
  return element.id
}

function hasName(element: Element): boolean {
  return Boolean(element.getAttribute('aria-label')?.trim() || element.getAttribute('aria-labelledby'))
}

/** The text a wrapping <label> gives its control: its own words, not the control's value or options. */
function ownText(label: Element): string {
  let text = ''
  for (const node of label.childNodes) if (node.nodeType === 3) text += node.textContent
  return text.replace(/\s+/g, ' ').trim()
}

function repairCardHeadings(root: ParentNode): void {
  // The outer header also holds the header-extra buttons: not a heading. The title inside is one, level 2 under the view's h1.
  for (const header of root.querySelectorAll('.n-card-header[role="heading"]')) header.setAttribute('role', 'none')
  for (const title of root.querySelectorAll('.n-card-header__main[role="heading"]:not([aria-level])')) title.setAttribute('aria-level', '2')
}

function repairDialogNames(root: ParentNode): void {
  for (const dialog of root.querySelectorAll('[role="dialog"]')) {
    if (hasName(dialog)) continue
    const title = DIALOG_TITLES.map((selector) => dialog.querySelector(selector)).find((element) => element?.textContent?.trim())
    if (title) dialog.setAttribute('aria-labelledby', idOf(title))
  }
}

function isInnerInput(control: Element): boolean {
  return Boolean(control.parentElement?.closest(CONTROL_SELECTOR))
}

function repairSelects(root: ParentNode): void {
  for (const target of root.querySelectorAll('.n-base-selection-label[tabindex], .n-base-selection-tags[tabindex]')) {
    const selection = target.closest('.n-base-selection')
    target.setAttribute('role', 'combobox')
    target.setAttribute('aria-haspopup', 'listbox')
    // naive-ui teleports the open menu to the body: the one menu on screen belongs to the active select.
    const menu = selection?.classList.contains('n-base-selection--active') ? lastOf(document.querySelectorAll('.n-base-select-menu')) : undefined
    target.setAttribute('aria-expanded', String(menu !== undefined))
    const list = menu && listOf(menu)
    if (list) {
      target.setAttribute('aria-controls', idOf(list))
      nameLike(list, target)
    } else target.removeAttribute('aria-controls')
    // A filterable select's text input is where typing goes: named like the select.
    for (const input of target.querySelectorAll('input')) if (!hasName(input)) nameLike(input, target)
  }
}

function nameLike(element: Element, source: Element): void {
  const label = source.getAttribute('aria-label')
  const labelledBy = source.getAttribute('aria-labelledby')
  if (label) element.setAttribute('aria-label', label)
  else if (labelledBy) element.setAttribute('aria-labelledby', labelledBy)
}

/**
 * Names a control that has only a placeholder: after its form item's label
 * (when the item holds that one control), an `aria-label` given to the
 * naive-ui component (it lands on the component's root), the page-size
 * picker of a table's pagination, or its wrapping <label> (when the label
 * does not already name it).
 */
function lastOf<T>(list: ArrayLike<T>): T | undefined {
  return list.length ? list[list.length - 1] : undefined
}

/**
 * The scrolling box of a select menu, made its listbox: a long menu scrolls,
 * and a scrolling box must be reachable from the keyboard.
 */
function listOf(menu: Element): Element | undefined {
  const list = menu.querySelector('.n-virtual-list, .n-scrollbar-container') ?? undefined
  if (list && list.getAttribute('role') !== 'listbox') {
    list.setAttribute('role', 'listbox')
    list.setAttribute('tabindex', '0')
  }
  return list
}

function repairSelectOptions(root: ParentNode): void {
  for (const option of root.querySelectorAll('.n-base-select-option')) {
    option.setAttribute('role', 'option')
    option.setAttribute('aria-selected', String(option.classList.contains('n-base-select-option--selected')))
  }
}

function repairControlNames(root: ParentNode): void {
  for (const control of root.querySelectorAll(CONTROL_SELECTOR)) {
    // A select's inner text input is named after the select (repairSelects).
    if (hasName(control) || isInnerInput(control)) continue
    const item = control.closest('.n-form-item')
    const itemLabel = item?.querySelector(':scope > .n-form-item-label')
    if (itemLabel && [...item!.querySelectorAll(CONTROL_SELECTOR)].filter((field) => !isInnerInput(field)).length === 1) {
      control.setAttribute('aria-labelledby', idOf(itemLabel))
      // The required mark is said as "required", not read as "star".
      const mark = itemLabel.querySelector('.n-form-item-label__asterisk')
      if (mark) {
        mark.setAttribute('aria-hidden', 'true')
        control.setAttribute('aria-required', 'true')
      }
      continue
    }
    const component = control.closest('[aria-label]:not(input, textarea, button, [role])')
    if (component) {
      // Moved, not copied: a <div> without a role may not carry a name.
      control.setAttribute('aria-label', component.getAttribute('aria-label')!)
      component.removeAttribute('aria-label')
      continue
    }
    if (control.closest('.n-pagination')) {
      control.setAttribute('aria-label', 'Rows per page')
      continue
    }
    const wrapping = control.closest('label')
    if (wrapping && !(control instanceof HTMLInputElement || control instanceof HTMLTextAreaElement ? wrapping.control === control : false)) {
      const text = ownText(wrapping)
      const placeholder = control.getAttribute('placeholder')
      if (text) control.setAttribute('aria-label', placeholder ? `${text}: ${placeholder}` : text)
    }
  }
}

function repairScrollRegions(root: ParentNode): void {
  for (const container of root.querySelectorAll<HTMLElement>('.n-data-table-base-table-body .n-scrollbar-container')) {
    if (container.hasAttribute('tabindex')) continue
    // Rows that take focus scroll the box themselves. Checked before the heights, which force a layout while the rows are still being drawn.
    if (container.querySelector('[tabindex="0"], button, a[href], input')) continue
    if (container.scrollHeight <= container.clientHeight) continue
    // Rows that cannot take focus: the scrolling box does, so the keyboard can scroll it.
    container.setAttribute('tabindex', '0')
    container.setAttribute('role', 'region')
    container.setAttribute('aria-label', 'Table rows (scroll with the arrow keys)')
  }
}

export function repairNaiveAria(root: ParentNode): void {
  repairCardHeadings(root)
  repairDialogNames(root)
  repairControlNames(root)
  repairSelects(root)
  repairSelectOptions(root)
  repairScrollRegions(root)
}

/** Whether a change can call for a repair: new content, or a select opening or closing (of class changes, which are many: hover, progress, focus). */
function needsRepair(mutation: MutationRecord): boolean {
  return mutation.type === 'childList' || (mutation.attributeName === 'class' && (mutation.target as Element).classList.contains('n-base-selection'))
}

/**
 * Keeps `root` repaired as naive-ui renders into it (and into the body, where
 * it teleports overlays), and its keyboard widgets labelled: the window's one
 * observer of the document.
 */
export function watchNaiveAria(root: HTMLElement = document.body): MutationObserver {
  let repairQueued = false
  let relabelQueued = false
  const observer = new MutationObserver((mutations) => {
    // Pagers change with their text and classes, password eyes with the input's type: relabelled once a frame at most (a running bulk job changes the page often).
    if (!relabelQueued) {
      relabelQueued = true
      requestAnimationFrame(() => {
        relabelQueued = false
        labelKeyboardWidgets(root)
      })
    }
    if (repairQueued || !mutations.some(needsRepair)) return
    repairQueued = true
    queueMicrotask(() => {
      repairQueued = false
      repairNaiveAria(root)
    })
  })
  repairNaiveAria(root)
  labelKeyboardWidgets(root)
  observer.observe(root, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['class', 'type'] })
  return observer
}
