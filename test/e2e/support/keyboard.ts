/**
 * Driving the window with the keyboard alone, as a user without a mouse:
 * Tab until the wanted control has focus (failing with every control that got
 * focus on the way), and describing what has focus now.
 */
import type { Page } from 'playwright-core'

/** The confirming button of an open confirmation dialog (the last one, after Cancel); its name may also be a page button's. */
export const DIALOG_CONFIRM = '.n-dialog__action button:last-child'

/** What the keyboard tests look for: a CSS selector the focused element matches, or a pattern its description matches. */
export type FocusTarget = string | RegExp

// The little of the DOM the in-page functions use (the tests' TypeScript project has no DOM library).
interface FocusedElement {
  readonly tagName: string
  readonly textContent: string | null
  getAttribute(name: string): string | null
  matches(selector: string): boolean
  closest(selector: string): FocusedElement | null
}
declare const document: { readonly activeElement: FocusedElement | null }

/**
 * The focused element in one line: tag, role, the nearest data-test and its
 * name (aria-label, else its text), e.g. `button[data-test=reveal] "Reveal"`;
 * `body` when focus is lost.
 */
export function describeFocus(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement
    if (!element || element.tagName === 'BODY') return 'body'
    const role = element.getAttribute('role')
    const testId = element.closest('[data-test]')?.getAttribute('data-test')
    const name = (element.getAttribute('aria-label') ?? element.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60)
    return `${element.tagName.toLowerCase()}${role ? `(${role})` : ''}${testId ? `[data-test=${testId}]` : ''} "${name}"`
  })
}

/** Whether the focused element matches the selector or the description the pattern. */
export async function focusMatches(page: Page, target: FocusTarget): Promise<boolean> {
  if (typeof target === 'string') return page.evaluate((selector) => document.activeElement?.matches(selector) ?? false, target)
  return target.test(await describeFocus(page))
}

/**
 * Presses Tab (or Shift+Tab with `backwards`) until the focused element
 * matches `target`, at most `maxPresses` times; throws with the list of what
 * got focus on the way.
 */
export async function tabTo(page: Page, target: FocusTarget, options: { backwards?: boolean; maxPresses?: number } = {}): Promise<void> {
  const visited: string[] = []
  for (let press = 0; press < (options.maxPresses ?? 40); press++) {
    await page.keyboard.press(options.backwards ? 'Shift+Tab' : 'Tab')
    if (await focusMatches(page, target)) return
    visited.push(await describeFocus(page))
  }
  throw new Error(`Focus never reached ${String(target)} in ${visited.length} presses; it went to:\n  ${visited.join('\n  ')}`)
}

/** Waits until the focused element matches `target`; fails naming where focus is instead. */
export async function expectFocus(page: Page, target: FocusTarget, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!(await focusMatches(page, target))) {
    if (Date.now() > until) throw new Error(`Expected focus on ${String(target)}, but it is on ${await describeFocus(page)}`)
    await page.waitForTimeout(50)
  }
}

/**
 * Switches view with Alt+`key` and waits until the heading named `title` has
 * focus: any heading will not do, as the one of the view being left matches
 * until the switch is done.
 */
export async function switchView(page: Page, key: number, title: string): Promise<void> {
  await page.keyboard.press(`Alt+${key}`)
  await page.locator('main h1:focus', { hasText: new RegExp(`^${title}$`) }).waitFor()
}

/** Replaces the focused field's text as a user does: Ctrl+A, then typing. */
export async function typeOver(page: Page, text: string): Promise<void> {
  await page.keyboard.press('Control+A')
  await page.keyboard.type(text)
}

/** The text of the focused element, e.g. the heading a view switch put focus on. */
export function focusedText(page: Page): Promise<string | null> {
  return page.evaluate(() => document.activeElement?.textContent ?? null)
}

/**
 * With focus on a closed select: opens it with Enter, moves the highlight
 * with ArrowDown to the option named `label`, and picks it with Enter; throws
 * with the options passed on the way if none is named so.
 */
export async function pickOptionNamed(page: Page, label: string): Promise<void> {
  // The menu of the select used before may still be fading out.
  const openMenus = page.locator('.n-base-select-menu:visible')
  for (let wait = 0; (await openMenus.count()) > 0; wait++) {
    if (wait > 40) throw new Error('A select menu stayed open')
    await page.waitForTimeout(50)
  }
  await page.keyboard.press('Enter')
  const highlighted = page.locator('.n-base-select-option--pending:visible')
  await highlighted.waitFor()
  const passed: string[] = []
  for (let press = 0; press < 40; press++) {
    const name = ((await highlighted.textContent()) ?? '').trim()
    if (name === label) {
      await page.keyboard.press('Enter')
      return
    }
    if (passed.includes(name)) break
    passed.push(name)
    await page.keyboard.press('ArrowDown')
  }
  throw new Error(`No option named "${label}"; the arrow keys went through: ${passed.join(', ')}`)
}
