/**
 * axe-core in the page: checks what is on screen against the WCAG 2.1 A and
 * AA rules and describes each violation in a line a failing test can show.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import type { AxeResults, Result, RunOptions } from 'axe-core'

const AXE_SOURCE = readFileSync(createRequire(__filename).resolve('axe-core/axe.min.js'), 'utf8')

/** The rule sets the app is held to: WCAG 2.0 and 2.1, levels A and AA. */
export const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']

async function ensureAxe(page: Page): Promise<void> {
  if (await page.evaluate(() => 'axe' in globalThis)) return
  // Evaluated through the debugging protocol: the app's Content-Security-Policy refuses inline script tags.
  await page.evaluate(AXE_SOURCE)
}

/** One line per failing element: rule, impact, where, and what axe says to fix. */
export function describeViolations(violations: Result[]): string[] {
  return violations.flatMap((violation) =>
    violation.nodes.map((node) => {
      const summary = (node.failureSummary ?? '').replace(/\s*\n\s*/g, ' ').trim()
      return `${violation.id} (${violation.impact}) at ${node.target.join(' ')}: ${summary}`
    })
  )
}

/**
 * Waits (up to `timeoutMs`) until no transition or finite animation runs: text
 * fading in or out is measured by axe at its momentary colour, a contrast the
 * user never reads. Endless animations (a spinner) are not waited for.
 */
async function settledAnimations(page: Page, timeoutMs = 3000): Promise<void> {
  await page.waitForFunction(
    () => {
      interface Animation {
        playState: string
        effect: { getComputedTiming(): { endTime?: unknown } } | null
      }
      const page = globalThis as unknown as { document: { getAnimations(): Animation[] } }
      return page.document.getAnimations().every((animation) => animation.playState !== 'running' || animation.effect?.getComputedTiming().endTime === Infinity)
    },
    undefined,
    { timeout: timeoutMs }
  )
}

/**
 * The WCAG 2.1 A/AA violations in the page (or inside `include`, a CSS
 * selector), described one line each: an empty list when there are none.
 * Checked once the page's animations have settled.
 */
export async function axeViolations(page: Page, include?: string): Promise<string[]> {
  await ensureAxe(page)
  await settledAnimations(page)
  const options: RunOptions = { runOnly: { type: 'tag', values: WCAG_21_AA }, resultTypes: ['violations'] }
  const results = await page.evaluate(
    ([context, runOptions]) => {
      const page = globalThis as unknown as { document: unknown; axe: { run(context: unknown, options: unknown): Promise<AxeResults> } }
      return page.axe.run(context ?? page.document, runOptions)
    },
    [include, options] as const
  )
  return describeViolations(results.violations)
}

/**
 * Text fields, selects and date inputs on screen that have no name of their
 * own: none at all, or only their placeholder (which a screen reader would
 * read in place of a label). One line each, with what the field shows.
 */
export async function fieldsWithoutLabel(page: Page): Promise<string[]> {
  await ensureAxe(page)
  return page.evaluate(() => {
    interface Field {
      tagName: string
      className: string
      getAttribute(name: string): string | null
      getClientRects(): { length: number }
      closest(selector: string): Field | null
      querySelector(selector: string): Field | null
      textContent: string | null
    }
    const scope = globalThis as unknown as {
      document: { querySelectorAll(selector: string): Iterable<Field> }
      axe: { setup(node: unknown): void; teardown(): void; commons: { text: { accessibleText(element: Field): string } } }
    }
    const { axe, document } = scope
    axe.setup(document)
    try {
      const fields = [...document.querySelectorAll('input:not([type="hidden"]):not([type="file"]):not([type="radio"]):not([type="checkbox"]), textarea, select, [role="combobox"]')]
      return fields.flatMap((field) => {
        if (field.getClientRects().length === 0) return []
        const name = axe.commons.text.accessibleText(field).trim()
        const placeholder = (field.getAttribute('placeholder') ?? field.closest('.n-base-selection')?.querySelector('.n-base-selection-placeholder')?.textContent ?? '').trim()
        if (name && name !== placeholder) return []
        return [`${field.tagName.toLowerCase()}.${field.className.split(' ')[0]} (placeholder "${placeholder}") is named ${name ? `only by its placeholder` : 'nothing'}`]
      })
    } finally {
      axe.teardown()
    }
  })
}
