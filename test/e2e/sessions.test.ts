import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chooseOption, chromiumAvailable, errorsOf, launchBrowser, navigate, openApp, screenshot } from './support/browser'
import { startDesktopHarness, type DesktopHarness } from './support/desktop-harness'
import { callRest } from './support/rest'
import { seedVault } from './support/seed'

describe.skipIf(!chromiumAvailable)('Sessions workflow', () => {
  let browser: Browser
  let harness: DesktopHarness
  let page: Page

  beforeAll(async () => {
    harness = await startDesktopHarness()
    await seedVault(harness)
    browser = await launchBrowser()
    page = await openApp(browser, harness)
    await navigate(page, 'Sessions')
  })

  afterAll(async () => {
    await browser?.close()
    await harness?.stop()
  })

  it('creates a session as a public application, authorizes it as a private one, and its key then works', async () => {
    await chooseOption(page, page.getByTestId('public-application'), 'Payment form')
    await page.getByTestId('create-session').click()
    const row = page.getByTestId('sessions-table').locator('tbody tr').first()
    await expect.poll(() => row.textContent()).toContain('not authorized')
    expect(await row.getByTestId('countdown').textContent()).toMatch(/expires in [23]:\d\d/)
    const sessionKey = (await row.getByTestId('session-key').textContent())!
    const base = await harness.serviceUrl()
    expect((await callRest(base, 'POST', '/tokens', sessionKey, { type: 'token', data: 'x' })).status).toBe(401)

    await chooseOption(page, page.getByTestId('private-application'), 'Checkout backend')
    await page.getByTestId('permissions-picker').getByText('create', { exact: true }).click()
    await page.getByTestId('authorize-session').click()
    await expect.poll(() => row.textContent()).toContain('authorized by Checkout backend')
    await screenshot(page, 'session-authorized', 'light')

    expect((await callRest(base, 'POST', '/tokens', sessionKey, { type: 'token', data: 'collected-in-browser' })).status).toBe(201)
    expect((await callRest(base, 'GET', '/tokens', sessionKey)).status).toBe(403)
    expect(errorsOf(page)).toEqual([])
  })
})
