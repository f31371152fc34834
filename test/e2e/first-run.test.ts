import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, confirmDialog, errorsOf, launchBrowser, openApp, screenshot } from './support/browser'
import { startDesktopHarness, type DesktopHarness } from './support/desktop-harness'
import { expectFocus } from './support/keyboard'
import { callRest } from './support/rest'

describe.skipIf(!chromiumAvailable)('First run, lock and settings', () => {
  let browser: Browser
  let harness: DesktopHarness
  let page: Page

  beforeAll(async () => {
    harness = await startDesktopHarness({ vault: 'none' })
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser?.close()
    await harness?.stop()
  })

  it('says when no OS keychain is available and offers the key file', async () => {
    for (const theme of ['dark', 'light'] as const) {
      page = await openApp(browser, harness, theme)
      await page.getByTestId('setup').waitFor()
      expect(await page.getByTestId('no-keychain').textContent()).toContain('No OS keychain available')
      expect(await page.getByRole('radio', { name: /OS keychain/ }).isDisabled()).toBe(true)
      await screenshot(page, 'setup', theme)
      if (theme === 'dark') await page.context().close()
    }
  })

  it('creates the vault and shows the management key once', async () => {
    await page.getByTestId('tenant-name').locator('input').fill('Acme payments')
    await page.getByRole('button', { name: 'Create vault' }).click()
    const dialog = page.getByTestId('key-once')
    const key = (await dialog.getByTestId('secret').textContent())!
    expect(key).toMatch(/^key_management/)
    await dialog.getByRole('button', { name: 'I have stored the key' }).click()
    expect((await callRest(await harness.serviceUrl(), 'GET', '/applications', key)).status).toBe(200)
    expect(await page.getByTestId('service-url').textContent()).toBe(await harness.serviceUrl())
  })

  it('switches views with Alt+number', async () => {
    await page.keyboard.press('Alt+3')
    await expect.poll(() => page.getByRole('heading', { name: 'Audit logs' }).isVisible()).toBe(true)
    await page.keyboard.press('Alt+7')
    await expect.poll(() => page.getByRole('heading', { name: 'Settings' }).isVisible()).toBe(true)
  })

  it('moves the REST service to another port from Settings', async () => {
    const before = await harness.serviceUrl()
    const port = Number(new URL(before).port) + 1
    await page.getByTestId('port').locator('input').fill(String(port))
    await page.getByTestId('save-service').click()
    await expect.poll(() => page.getByTestId('settings-service-url').textContent()).toBe(`http://127.0.0.1:${port}`)
    expect(await harness.serviceUrl()).toBe(`http://127.0.0.1:${port}`)
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBeLessThan(500)
  })

  it('locks the vault, stopping the service, and unlocks it again', async () => {
    const url = await harness.serviceUrl()
    await page.getByTestId('settings-lock').click()
    await confirmDialog(page, 'Lock')
    await page.getByTestId('locked').waitFor()
    expect((await harness.desktop.status()).service.running).toBe(false)
    await expect(fetch(`${url}/health`)).rejects.toThrow()
    await screenshot(page, 'locked', 'light')

    await page.getByTestId('unlock').click()
    await page.getByTestId('service-url').waitFor()
    expect((await harness.desktop.status()).state).toBe('unlocked')
    expect(errorsOf(page)).toEqual([])
  })
})

describe.skipIf(!chromiumAvailable)('A lock while the first-run key is shown', () => {
  let browser: Browser
  let harness: DesktopHarness

  beforeAll(async () => {
    harness = await startDesktopHarness({ vault: 'none' })
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser?.close()
    await harness?.stop()
  })

  it('takes the management key off the screen and out of the window, and does not show it again after unlocking', async () => {
    const page = await openApp(browser, harness)
    await page.getByTestId('setup').waitFor()
    await page.getByTestId('tenant-name').locator('input').fill('Acme')
    await page.getByRole('button', { name: 'Create vault' }).click()
    const dialog = page.getByTestId('key-once')
    const key = (await dialog.getByTestId('secret').textContent())!
    expect(key).toMatch(/^key_management/)

    // As the idle lock does, before "I have stored the key" is clicked.
    await harness.desktop.lock('Vault locked after 15 minutes idle')
    await page.getByTestId('locked').waitFor()
    await dialog.waitFor({ state: 'detached' })
    expect(await page.content()).not.toContain(key)
    await expectFocus(page, '[data-test=unlock]')

    await page.getByTestId('unlock').click()
    await page.getByTestId('service-url').waitFor()
    expect(await dialog.count()).toBe(0)
    expect(await page.content()).not.toContain(key)
    expect(errorsOf(page)).toEqual([])
  })
})
