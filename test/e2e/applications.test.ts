import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, confirmDialog, errorsOf, launchBrowser, navigate, openApp, screenshot } from './support/browser'
import { startDesktopHarness, type DesktopHarness } from './support/desktop-harness'
import { callRest } from './support/rest'

describe.skipIf(!chromiumAvailable)('Applications workflow', () => {
  let browser: Browser
  let harness: DesktopHarness
  let page: Page
  let key: string

  beforeAll(async () => {
    harness = await startDesktopHarness()
    browser = await launchBrowser()
    page = await openApp(browser, harness)
    await navigate(page, 'Applications')
  })

  afterAll(async () => {
    await browser?.close()
    await harness?.stop()
  })

  it('creates a private application with a permissions picker and shows its key once', async () => {
    await page.getByTestId('new-application').click()
    const form = page.getByTestId('application-form')
    await form.getByTestId('application-name').locator('input').fill('Reporting job')
    const picker = form.getByTestId('permissions-picker')
    // A private application is offered token permissions only.
    expect(await picker.getByText('create', { exact: true }).count()).toBe(1)
    expect(await picker.getByText('log', { exact: true }).count()).toBe(0)
    await picker.getByText('create', { exact: true }).click()
    await picker.getByText('read', { exact: true }).click()
    await screenshot(page, 'application-form', 'light')
    await form.getByTestId('application-submit').click()

    const dialog = page.getByTestId('key-once')
    key = (await dialog.getByTestId('secret').textContent())!
    expect(key).toMatch(/^key_private/)
    await screenshot(page, 'application-key', 'light')
    await dialog.getByRole('button', { name: 'I have stored the key' }).click()
    await expect.poll(() => page.getByTestId('applications-table').textContent()).toContain('Reporting job')
    expect(await page.getByTestId('applications-table').textContent()).not.toContain(key)
  })

  it('lets the key call the REST service, and the call appears in the audit log', async () => {
    const created = await callRest(await harness.serviceUrl(), 'POST', '/tokens', key, { type: 'token', data: 'order-7781' })
    expect(created.status).toBe(201)

    await navigate(page, 'Audit logs')
    await page.getByTestId('filter-entity-id').locator('input').fill(created.body.id)
    await page.getByTestId('apply-log-filters').click()
    const table = page.getByTestId('logs-table')
    await expect.poll(() => table.textContent()).toContain('Token created')
    const application = (await harness.desktop.requireVault().services.applications.list(harness.desktop.actor(), { type: 'private' })).data[0]
    expect(await table.textContent()).toContain(application.id)
  })

  it('regenerates the key: the new one works and the old one is refused at once', async () => {
    await navigate(page, 'Applications')
    const row = page.getByTestId('applications-table').locator('tr', { hasText: 'Reporting job' })
    await row.getByTestId('regenerate').click()
    await confirmDialog(page, 'Regenerate')
    const dialog = page.getByTestId('key-once')
    const fresh = (await dialog.getByTestId('secret').textContent())!
    await dialog.getByRole('button', { name: 'I have stored the key' }).click()

    const base = await harness.serviceUrl()
    expect((await callRest(base, 'GET', '/tokens', key)).status).toBe(401)
    expect((await callRest(base, 'GET', '/tokens', fresh)).status).toBe(200)
    expect(errorsOf(page)).toEqual([])
  })
})
