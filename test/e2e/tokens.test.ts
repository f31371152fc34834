import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chooseOption, chromiumAvailable, errorsOf, launchBrowser, openApp, screenshot } from './support/browser'
import { startDesktopHarness, type DesktopHarness } from './support/desktop-harness'

describe.skipIf(!chromiumAvailable)('Tokens view', () => {
  let browser: Browser
  let harness: DesktopHarness
  let page: Page

  beforeAll(async () => {
    harness = await startDesktopHarness()
    browser = await launchBrowser()
    page = await openApp(browser, harness)
  })

  afterAll(async () => {
    await browser?.close()
    await harness?.stop()
  })

  it('shows an empty state before any token exists', async () => {
    await expect.poll(() => page.getByText('No tokens yet').isVisible()).toBe(true)
  })

  it('creates a card token from the form and lists it masked', async () => {
    await page.getByTestId('new-token').click()
    const form = page.getByTestId('token-form')
    await chooseOption(page, form.getByTestId('token-type'), 'card')
    await form.getByTestId('token-data').locator('textarea').fill('{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2030}')
    await form.getByTestId('token-submit').click()
    const row = page.getByTestId('token-row').first()
    await expect.poll(() => row.textContent()).toContain('XXXXXXXXXXXX4242')
    expect(await row.textContent()).not.toContain('4242424242424242')
  })

  it('opens a token from the keyboard and closes it with Escape', async () => {
    await page.getByTestId('token-row').first().focus()
    await page.keyboard.press('Enter')
    const detail = page.getByTestId('token-detail')
    await detail.waitFor()
    await page.keyboard.press('Escape')
    await detail.waitFor({ state: 'detached' })
  })

  it('reveals a token for a limited time after asking for a reason, and logs it', async () => {
    await page.getByTestId('token-row').first().click()
    const detail = page.getByTestId('token-detail')
    await expect.poll(() => detail.isVisible()).toBe(true)
    const id = (await detail.getByTestId('detail-id').textContent())!
    await detail.getByTestId('reveal').click()
    await page.getByTestId('reveal-reason').locator('input').fill('Support ticket 4821')
    await page.getByTestId('reveal-confirm').click()
    await expect.poll(() => detail.getByTestId('revealed-data').textContent()).toContain('4242424242424242')
    await screenshot(page, 'token-revealed', 'light')

    const logs = await harness.desktop.requireVault().services.logs.list(harness.desktop.actor(), { entity_id: id })
    expect(logs.data.map((entry) => entry.message)).toContain('Token revealed: Support ticket 4821')
    expect(errorsOf(page)).toEqual([])
  })
})
