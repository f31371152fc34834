/**
 * Repairs what naive-ui (2.45) renders that assistive technology cannot use,
 * and that no prop or theme override reaches:
 *
 * - card headers are a role="heading" nested in a role="heading", neither with a level;
 * - modals, drawers and dialogs (role="dialog") have no accessible name;
 * - a select's keyboard focus target is a bare <div>: no role, no name, no state;
 * - a form item's <label> is not tied to its input, so the placeholder is read instead;
 * - a table body that scrolls cannot be reached from the keyboard.
 *
 * `watchNaiveAria` runs `repairNaiveAria` on the document whenever naive-ui
 * renders something new (a view, a modal, a menu), so components stay plain.
 */

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

function repairSelects(root: ParentNode): void {
  for (const target of root.querySelectorAll('.n-base-selection-label[tabindex], .n-base-selection-tags[tabindex]')) {
    const selection = target.closest('.n-base-selection')
    target.setAttribute('role', 'combobox')
    target.setAttribute('aria-haspopup', 'listbox')
    target.setAttribute('aria-expanded', String(Boolean(selection?.classList.contains('n-base-selection--active'))))
    // A filterable select's text input is where typing goes: named like the select.
    const pattern = selection?.querySelector('input')
    if (pattern && !hasName(pattern)) nameLike(pattern, target)
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
function repairControlNames(root: ParentNode): void {
  for (const control of root.querySelectorAll(CONTROL_SELECTOR)) {
    if (hasName(control)) continue
    const item = control.closest('.n-form-item')
    const itemLabel = item?.querySelector(':scope > .n-form-item-label')
    if (itemLabel && item!.querySelectorAll(CONTROL_SELECTOR).length === 1) {
      control.setAttribute('aria-labelledby', idOf(itemLabel))
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
    if (container.hasAttribute('tabindex') || container.scrollHeight <= container.clientHeight) continue
    if (container.querySelector('[tabindex="0"], button, a[href], input')) continue
    // Rows that cannot take focus: the scrolling box does, so the keyboard can scroll it.
    container.setAttribute('tabindex', '0')
    container.setAttribute('role', 'region')
    container.setAttribute('aria-label', 'Table rows (scroll with the arrow keys)')
  }
}

export function repairNaiveAria(root: ParentNode): void {
  repairCardHeadings(root)
  repairDialogNames(root)
  repairSelects(root)
  repairControlNames(root)
  repairScrollRegions(root)
}

/** Keeps `root` repaired as naive-ui renders into it (and into the body, where it teleports overlays). */
export function watchNaiveAria(root: HTMLElement = document.body): MutationObserver {
  let queued = false
  const observer = new MutationObserver(() => {
    if (queued) return
    queued = true
    queueMicrotask(() => {
      queued = false
      repairNaiveAria(root)
    })
  })
  repairNaiveAria(root)
  observer.observe(root, { childList: true, subtree: true, attributes: true, attributeFilter: ['class'] })
  return observer
}
