import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf } from './support/browser'
import { useDesktopApp } from './support/desktop-app'

const TOKENS = 100_000
const BATCH = 1_000

/** Runs `action` and waits until the table shows `expected` in its pagination and has stopped loading. (How fast is measured by `npm run bench`, not here.) */
async function changePage(page: Page, action: () => Promise<void>, expected: string): Promise<void> {
  await action()
  await page.getByTestId('tokens-table').locator('.n-pagination', { hasText: expected }).waitFor()
  await page.locator('.n-data-table--loading').waitFor({ state: 'detached' }).catch(() => undefined)
}

describe.skipIf(!chromiumAvailable)(`Tokens view with ${TOKENS.toLocaleString('en')} tokens`, () => {
  const app = useDesktopApp({
    prepare: async (harness) => {
      const services = harness.desktop.requireVault().services
      const actor = harness.desktop.actor()
      for (let i = 0; i < TOKENS; i += BATCH) {
        await services.tokenize.run(actor, Array.from({ length: BATCH }, (_, j) => ({ type: 'token', data: `value-${i + j}`, metadata: { batch: String(i / BATCH) } })))
      }
    },
    timeoutMs: 120_000
  })

  it('pages to the end and filters by metadata', async () => {
    const table = app.page.getByTestId('tokens-table')
    await expect.poll(() => table.textContent()).toContain(`${TOKENS.toLocaleString('en')} tokens`)
    const last = String(TOKENS / 20)
    await changePage(app.page, () => table.locator('.n-pagination-item', { hasText: new RegExp(`^${last}$`) }).click(), last)
    await expect.poll(() => table.locator('.n-pagination-item--active').textContent()).toBe(last)
    await expect.poll(() => table.locator('tbody tr').count()).toBe(20)

    await app.page.getByTestId('filter-metadata').click()
    await app.page.getByRole('button', { name: 'Add metadata filter' }).click()
    await app.page.getByPlaceholder('key').fill('batch')
    await app.page.getByPlaceholder('value').fill('42')
    await app.page.keyboard.press('Escape')
    await changePage(app.page, () => app.page.getByTestId('apply-filters').click(), '1,000 tokens')
    await expect.poll(() => table.textContent()).toContain('1,000 tokens')
    expect(errorsOf(app.page)).toEqual([])
  })
})
