import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf, launchBrowser, openApp } from './support/browser'
import { startDesktopHarness, type DesktopHarness } from './support/desktop-harness'

const TOKENS = 100_000
const BATCH = 1_000

/** How long the table takes to show the page after a click, in ms. */
async function timePageChange(page: Page, action: () => Promise<void>, expected: string): Promise<number> {
  const started = Date.now()
  await action()
  await page.getByTestId('tokens-table').locator('.n-pagination', { hasText: expected }).waitFor()
  await page.locator('.n-data-table--loading').waitFor({ state: 'detached' }).catch(() => undefined)
  return Date.now() - started
}

describe.skipIf(!chromiumAvailable)(`Tokens view with ${TOKENS.toLocaleString('en')} tokens`, () => {
  let browser: Browser
  let harness: DesktopHarness
  let page: Page

  beforeAll(async () => {
    harness = await startDesktopHarness()
    const services = harness.desktop.requireVault().services
    const actor = harness.desktop.actor()
    for (let i = 0; i < TOKENS; i += BATCH) {
      await services.tokenize.tokenize(actor, Array.from({ length: BATCH }, (_, j) => ({ type: 'token', data: `value-${i + j}`, metadata: { batch: String(i / BATCH) } })))
    }
    browser = await launchBrowser()
    page = await openApp(browser, harness)
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await harness?.stop()
  })

  it('pages to the end and filters by metadata in well under a second each', async () => {
    const table = page.getByTestId('tokens-table')
    await expect.poll(() => table.textContent()).toContain(`${TOKENS.toLocaleString('en')} tokens`)
    const last = String(TOKENS / 20)
    const toLast = await timePageChange(page, () => table.locator('.n-pagination-item', { hasText: new RegExp(`^${last}$`) }).click(), last)
    expect(toLast).toBeLessThan(1_000)

    await page.getByTestId('filter-metadata').click()
    await page.getByRole('button', { name: 'Add metadata filter' }).click()
    await page.getByPlaceholder('key').fill('batch')
    await page.getByPlaceholder('value').fill('42')
    await page.keyboard.press('Escape')
    const filtered = await timePageChange(page, () => page.getByTestId('apply-filters').click(), '1,000 tokens')
    expect(filtered).toBeLessThan(1_000)
    expect(errorsOf(page)).toEqual([])
  })
})
