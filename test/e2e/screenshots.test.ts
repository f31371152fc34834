import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chooseOption, chromiumAvailable, docsScreenshot, errorsOf, launchBrowser, navigate, openApp, VIEWPORT } from './support/browser'
import { customersCsv } from './support/data'
import type { DesktopHarness } from './support/desktop-harness'
import { activityChartTotal, horizontalOverflows, nextFrame, settled } from './support/in-page'
import { startShowcaseHarness } from './support/seed'

interface Shot {
  /** The picture's name: `desktop-<name>-<theme>.png`. */
  name: string
  /** The sidebar link of its view. */
  view: string
  /** Puts the view in the state pictured (data only the window holds, a tab). */
  prepare?: (page: Page) => Promise<void>
  /** Waits for what the picture shows. */
  ready: (page: Page) => Promise<unknown>
}

const rowsOf = (table: string) => (page: Page) => page.getByTestId(table).locator('.n-data-table-tbody .n-data-table-tr').first().waitFor()
const openTab = (title: string) => (page: Page) => page.locator('.n-tabs-tab', { hasText: title }).click()

async function createSessions(page: Page): Promise<void> {
  const table = page.getByTestId('sessions-table')
  await chooseOption(page, page.getByTestId('public-application'), 'Payment form — EU storefront (production)')
  await page.getByTestId('create-session').click()
  await table.getByText('not authorized').waitFor()
  await chooseOption(page, page.getByTestId('private-application'), 'Checkout backend')
  await page.getByTestId('permissions-picker').getByText('create', { exact: true }).click()
  await page.getByTestId('authorize-session').click()
  await table.getByText('authorized by Checkout backend').waitFor()
  await page.getByTestId('create-session').click()
  await table.getByText('not authorized').waitFor()
}

async function uploadCustomers(page: Page): Promise<void> {
  const csv = Buffer.from(customersCsv(1_250))
  await page.getByTestId('csv-upload').locator('input[type=file]').setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: csv })
  await chooseOption(page, page.getByTestId('role-customer'), 'Keep as is')
}

/** In sidebar order, except the audit log: it comes first, before this window's own reads fill its first page. */
const SHOTS: Shot[] = [
  {
    name: 'logs',
    view: 'Audit logs',
    ready: async (page) => {
      await rowsOf('logs-table')(page)
      await page.waitForFunction(activityChartTotal)
    }
  },
  { name: 'tokens', view: 'Tokens', ready: rowsOf('tokens-table') },
  { name: 'tokenize', view: 'Bulk tokenize', prepare: uploadCustomers, ready: (page) => page.getByTestId('run').waitFor() },
  { name: 'applications', view: 'Applications', ready: rowsOf('applications-table') },
  { name: 'sessions', view: 'Sessions', prepare: createSessions, ready: rowsOf('sessions-table') },
  { name: 'members', view: 'Members', ready: rowsOf('members-table') },
  { name: 'invitations', view: 'Members', prepare: openTab('Invitations'), ready: rowsOf('invitations-table') },
  { name: 'outbox', view: 'Members', prepare: openTab('Outbox'), ready: rowsOf('outbox-table') },
  { name: 'settings', view: 'Settings', ready: (page) => page.getByTestId('settings-service-url').waitFor() },
  { name: 'webhooks', view: 'Webhooks', ready: rowsOf('webhooks-table') }
]

/** Nothing spins, loads or pops up any more, and the last frame is painted. */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle')
  await page.waitForFunction(settled)
  await page.evaluate(nextFrame)
}

describe.skipIf(!chromiumAvailable)('every view at 1280×800 over a lived-in vault', () => {
  let browser: Browser

  beforeAll(async () => {
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser?.close()
  })

  for (const theme of ['light', 'dark'] as const) {
    describe(`${theme} theme`, () => {
      let harness: DesktopHarness
      let page: Page

      beforeAll(async () => {
        harness = await startShowcaseHarness()
        page = await openApp(browser, harness, theme, '/logs')
        expect(await page.locator('html').getAttribute('data-theme')).toBe(theme)
      })

      afterAll(async () => {
        await page?.context().close()
        await harness?.stop()
      })

      for (const shot of SHOTS) {
        it(`shows ${shot.name} whole: no cut column, header or control, no sideways scrolling`, async () => {
          await navigate(page, shot.view)
          await shot.prepare?.(page)
          await shot.ready(page)
          await settle(page)
          expect(await page.evaluate(horizontalOverflows)).toEqual([])
          await docsScreenshot(page, shot.name, theme)
        })
      }

      it('adds the secondary columns in a 1600-pixel window, still without cutting anything', async () => {
        await page.setViewportSize({ width: 1600, height: 900 })
        try {
          for (const [view, table, extra] of [
            ['Tokens', 'tokens-table', ['Containers', 'Expires']],
            ['Applications', 'applications-table', ['Created']]
          ] as const) {
            await navigate(page, view)
            await rowsOf(table)(page)
            await settle(page)
            const headers = await page.getByTestId(table).locator('thead th').allTextContents()
            expect(headers).toEqual(expect.arrayContaining([...extra]))
            expect(await page.evaluate(horizontalOverflows)).toEqual([])
          }
        } finally {
          await page.setViewportSize(VIEWPORT)
        }
      })

      it('throws no error on the way', () => {
        expect(errorsOf(page)).toEqual([])
      })
    })
  }
})
