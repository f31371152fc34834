import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { axeViolations } from './support/axe'
import { chromiumAvailable, errorsOf, navigate } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { nextFrame, settled } from './support/in-page'
import { seedVault } from './support/seed'

const THEMES = ['light', 'dark'] as const

/** Nothing loads, spins or pops up, and the last frame is painted. */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle')
  await page.waitForFunction(settled)
  await page.evaluate(nextFrame)
}

const firstRow = (page: Page, table: string) => page.getByTestId(table).locator('.n-data-table-tbody .n-data-table-tr').first().waitFor()
const openTab = (page: Page, title: string) => page.locator('.n-tabs-tab', { hasText: title }).click()

interface ViewCheck {
  name: string
  /** The sidebar link. */
  view: string
  /** Waits for the view's data (and opens a tab). */
  ready: (page: Page) => Promise<unknown>
}

const VIEWS: ViewCheck[] = [
  { name: 'tokens', view: 'Tokens', ready: (page) => firstRow(page, 'tokens-table') },
  { name: 'tokenize', view: 'Bulk tokenize', ready: (page) => page.getByTestId('csv-upload').waitFor() },
  { name: 'audit logs', view: 'Audit logs', ready: (page) => firstRow(page, 'logs-table') },
  { name: 'applications', view: 'Applications', ready: (page) => firstRow(page, 'applications-table') },
  { name: 'sessions', view: 'Sessions', ready: (page) => page.getByTestId('sessions-table').waitFor() },
  { name: 'members', view: 'Members', ready: (page) => firstRow(page, 'members-table') },
  { name: 'invitations', view: 'Members', ready: async (page) => (await openTab(page, 'Invitations'), firstRow(page, 'invitations-table')) },
  { name: 'outbox', view: 'Members', ready: async (page) => (await openTab(page, 'Outbox'), firstRow(page, 'outbox-table')) },
  { name: 'settings', view: 'Settings', ready: (page) => page.getByTestId('keys-card').locator('tbody tr').first().waitFor() }
]

describe.skipIf(!chromiumAvailable)('accessibility: WCAG 2.1 A and AA (axe-core) in both themes', () => {
  const app = useDesktopApp({ prepare: seedVault })

  for (const theme of THEMES) {
    describe(`${theme} theme`, () => {
      beforeAll(async () => {
        await app.page.emulateMedia({ colorScheme: theme })
        await app.page.waitForFunction((name) => (globalThis as unknown as { document: { documentElement: { dataset: { theme?: string } } } }).document.documentElement.dataset.theme === name, theme)
      })

      for (const check of VIEWS) {
        it(`has no violation on the ${check.name} view`, async () => {
          await navigate(app.page, check.view)
          await check.ready(app.page)
          await settle(app.page)
          expect(await axeViolations(app.page)).toEqual([])
        })
      }

      it('throws no error on the way', () => {
        expect(errorsOf(app.page)).toEqual([])
      })
    })
  }
})
