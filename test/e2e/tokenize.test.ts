import { readFile } from 'node:fs/promises'
import Papa from 'papaparse'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { chooseOption, chromiumAvailable, errorsOf, navigate, screenshot } from './support/browser'
import { cardNumber, customersCsv } from './support/data'
import { useDesktopApp } from './support/desktop-app'
import { listTokensQuery } from '../../src/shared/contracts'
import { parse } from '../../src/main/app'

const ROWS = 10_000

/** Starts collecting the page's long tasks (main-thread blocks over 50 ms). */
async function watchLongTasks(page: Page): Promise<void> {
  await page.evaluate(() => {
    const tasks: number[] = []
    ;(globalThis as unknown as { longTasks: number[] }).longTasks = tasks
    new PerformanceObserver((list) => list.getEntries().forEach((entry) => tasks.push(entry.duration))).observe({ type: 'longtask' as never })
  })
}

async function longestTask(page: Page): Promise<number> {
  return page.evaluate(() => Math.max(0, ...(globalThis as unknown as { longTasks: number[] }).longTasks))
}

async function upload(page: Page, name: string, csv: string): Promise<void> {
  await page.getByTestId('csv-upload').locator('input[type=file]').setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(csv) })
}

describe.skipIf(!chromiumAvailable)('Bulk tokenize workflow', () => {
  const app = useDesktopApp({ view: 'Bulk tokenize' })

  it(`tokenizes a ${ROWS.toLocaleString('en')}-row CSV in chunks while the window stays responsive`, async () => {
    await upload(app.page, 'customers.csv', customersCsv(ROWS))
    // The card column is recognised; the customer reference stays as it is.
    await chooseOption(app.page, app.page.getByTestId('role-customer'), 'Keep as is')
    await screenshot(app.page, 'tokenize-mapping', 'light')

    await watchLongTasks(app.page)
    await app.page.getByTestId('run').click()
    // The cancel button answers while the chunks are running.
    await app.page.getByTestId('cancel').waitFor()
    await app.page.getByTestId('processed').filter({ hasText: `${ROWS.toLocaleString('en')} / ${ROWS.toLocaleString('en')}` }).waitFor({ timeout: 60_000 })
    await app.page.getByTestId('result').waitFor()
    expect(await app.page.getByTestId('tokens-created').textContent()).toContain((2 * ROWS).toLocaleString('en'))
    expect(await longestTask(app.page)).toBeLessThan(500)
    await screenshot(app.page, 'tokenize-result', 'light')

    const total = await app.harness.desktop.requireVault().services.tokens.list(app.harness.desktop.actor(), parse(listTokensQuery, { size: 1 }))
    expect(total.pagination.total_items).toBe(2 * ROWS)
  })

  it('exports a CSV of token ids in place of the tokenized values', async () => {
    const download = app.page.waitForEvent('download')
    await app.page.getByTestId('export').click()
    const file = await (await download).path()
    const parsed = Papa.parse<Record<string, string>>(await readFile(file, 'utf8'), { header: true, skipEmptyLines: true })
    expect(parsed.meta.fields).toEqual(['customer', 'card_number', 'ssn'])
    expect(parsed.data).toHaveLength(ROWS)
    expect(parsed.data[0].customer).toBe('cus_0')
    expect(parsed.data[0].card_number).toMatch(/^[0-9a-f-]{36}$/)
    expect(parsed.data[0].ssn).toMatch(/^[0-9a-f-]{36}$/)
    expect(await readFile(file, 'utf8')).not.toContain(cardNumber(0))
  })

  it('browses the new card tokens masked and reveals one', async () => {
    await navigate(app.page, 'Tokens')
    await chooseOption(app.page, app.page.getByTestId('filter-type'), 'card')
    await app.page.getByTestId('apply-filters').click()
    const rows = app.page.getByTestId('token-row')
    await expect.poll(() => rows.first().textContent()).toMatch(/XXXXXXXXXXXX\d{4}/)
    expect(await app.page.getByTestId('tokens-table').textContent()).toContain(`${ROWS.toLocaleString('en')} tokens`)

    const masked = (await rows.first().textContent())!.match(/XXXXXXXXXXXX(\d{4})/)![1]
    await rows.first().click()
    await app.page.getByTestId('reveal').click()
    await app.page.getByTestId('reveal-reason').locator('input').fill('Reconcile a chargeback')
    await app.page.getByTestId('reveal-confirm').click()
    const revealed = JSON.parse((await app.page.getByTestId('revealed-data').textContent())!) as { number: string }
    expect(revealed.number).toMatch(/^4\d{15}$/)
    expect(revealed.number.endsWith(masked)).toBe(true)
    expect(revealed.number).toBe(cardNumber(Number(revealed.number.slice(1, 15))))
    await app.page.keyboard.press('Escape')
    expect(errorsOf(app.page)).toEqual([])
  })

  it('stops at a bad row and names it', async () => {
    await navigate(app.page, 'Bulk tokenize')
    const startOver = app.page.getByRole('button', { name: 'Start over' })
    if (await startOver.isVisible()) await startOver.click()
    await upload(app.page, 'broken.csv', 'card_number\n4242424242424242\n4242424242424241\n')
    await chooseOption(app.page, app.page.getByTestId('role-card_number'), 'Tokenize as card')
    await app.page.getByTestId('run').click()
    await expect.poll(() => app.page.getByTestId('run-error').textContent()).toContain('row 2')
    await screenshot(app.page, 'tokenize-error', 'light')
  })
})
