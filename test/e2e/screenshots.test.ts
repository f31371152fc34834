import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf, launchBrowser, navigate, openApp, screenshot } from './support/browser'
import { startDesktopHarness, type DesktopHarness } from './support/desktop-harness'
import { seedVault } from './support/seed'

const VIEWS = [
  { title: 'Tokens', name: 'tokens', ready: 'token-row' },
  { title: 'Bulk tokenize', name: 'tokenize', ready: 'csv-upload' },
  { title: 'Audit logs', name: 'logs', ready: 'logs-table' },
  { title: 'Applications', name: 'applications', ready: 'applications-table' },
  { title: 'Sessions', name: 'sessions', ready: 'sessions-table' },
  { title: 'Members', name: 'members', ready: 'members-table' },
  { title: 'Settings', name: 'settings', ready: 'service-card' }
]

describe.skipIf(!chromiumAvailable)('every view, light and dark', () => {
  let browser: Browser
  let harness: DesktopHarness

  beforeAll(async () => {
    harness = await startDesktopHarness()
    await seedVault(harness)
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser?.close()
    await harness?.stop()
  })

  for (const theme of ['light', 'dark'] as const) {
    it(`renders every view in the ${theme} theme`, async () => {
      const page = await openApp(browser, harness, theme)
      expect(await page.locator('html').getAttribute('data-theme')).toBe(theme)
      for (const view of VIEWS) {
        await navigate(page, view.title)
        await page.getByTestId(view.ready).first().waitFor()
        await page.waitForLoadState('networkidle')
        // Views load in several steps (the log chart after the table): shoot once nothing spins.
        await page.locator('.n-data-table-loading-wrapper').first().waitFor({ state: 'detached' })
        await screenshot(page, view.name, theme)
      }
      expect(errorsOf(page)).toEqual([])
      await page.context().close()
    })
  }
})
