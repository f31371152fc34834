/**
 * Bulk tokenize by keyboard alone: the source tabs are tabs (arrow keys), the
 * CSV comes through a real "Choose a CSV file" button and the file chooser,
 * JSON is pasted and loaded, and focus follows each step (run, result, start
 * over). Also pages through the result table.
 */
import { describe, expect, it } from 'vitest'
import { listTokensQuery } from '../../src/shared/contracts'
import { parse } from '../../src/main/app'
import { chromiumAvailable, errorsOf } from './support/browser'
import { customersCsv } from './support/data'
import { useDesktopApp } from './support/desktop-app'
import { describeFocus, expectFocus, switchView, tabTo } from './support/keyboard'

describe.skipIf(!chromiumAvailable)('Bulk tokenize by keyboard', () => {
  const app = useDesktopApp()
  const tokenCount = async () => (await app.harness.desktop.requireVault().services.tokens.list(app.harness.desktop.actor(), parse(listTokensQuery, { size: 1 }))).pagination.total_items

  it('tokenizes a CSV file chosen with the keyboard, then pages through the result', async () => {
    // Listening from the start: Playwright turns on file-chooser interception asynchronously, and a
    // chooser opened before it is on would go unseen.
    const chooser = app.page.waitForEvent('filechooser', { timeout: 30_000 })
    await switchView(app.page, 2, 'Bulk tokenize')
    await tabTo(app.page, '[role=tab][aria-selected=true]')
    expect(await describeFocus(app.page)).toMatch(/^div\(tab\) "Import CSV"/)
    await app.page.keyboard.press('Tab')
    expect(await describeFocus(app.page)).toMatch(/^button\[data-test=choose-file\] "Choose a CSV file…"/)

    await app.page.keyboard.press('Enter')
    await (await chooser).setFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(customersCsv(25)) })
    await app.page.getByText('2. Columns of customers.csv').waitFor()
    await expectFocus(app.page, '[data-test=run]')

    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('result').waitFor()
    await expectFocus(app.page, '[data-test=export]')
    // Three columns of 25 rows, each tokenized as the column mapping proposes.
    expect(await tokenCount()).toBe(75)

    // The result table shows 10 rows a page: Next page by keyboard, focus stays on the pager.
    const firstRow = app.page.getByTestId('result').locator('tbody tr').first()
    const before = await firstRow.textContent()
    await tabTo(app.page, '[aria-label="Next page"]')
    await app.page.keyboard.press('Enter')
    await expect.poll(() => firstRow.textContent()).not.toBe(before)
    await expectFocus(app.page, '.n-pagination-item')
    expect(await app.page.getByTestId('result').locator('[aria-current=page]').textContent()).toBe('2')
    await tabTo(app.page, '[aria-label="Page 3"]')
    await app.page.keyboard.press(' ')
    await expect.poll(() => app.page.getByTestId('result').locator('[aria-current=page]').textContent()).toBe('3')
  })

  it('loads pasted JSON from the second tab, reached with the arrow keys', async () => {
    await tabTo(app.page, /^button "Start over"/, { backwards: true })
    await app.page.keyboard.press('Enter')
    await expectFocus(app.page, '#tokenize-source-tab-csv')

    await app.page.keyboard.press('ArrowRight')
    await expectFocus(app.page, '#tokenize-source-tab-json')
    expect(await app.page.getAttribute('#tokenize-source-tab-json', 'aria-selected')).toBe('true')
    await app.page.keyboard.press('Tab')
    await app.page.keyboard.press('Tab')
    expect(await describeFocus(app.page)).toMatch(/^textarea\[data-test=json-input\]/)
    await app.page.keyboard.type('["123-45-6789", "987-65-4321"]')
    await tabTo(app.page, '[data-test=json-load]')
    await app.page.keyboard.press('Enter')
    await app.page.getByText('2 rows').first().waitFor()
    await expectFocus(app.page, '[data-test=run]')
    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('result').waitFor()
    expect(await tokenCount()).toBe(77)
    expect(errorsOf(app.page)).toEqual([])
  })
})
