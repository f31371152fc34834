/**
 * The list views the window keeps for a return (tokens, audit log) are made
 * ahead of their first visit, while the window is idle, so that the first
 * visit only draws the rows it reads, as a return does. A view made ahead
 * reads nothing until it shows, reads its rows once when it does, and closes
 * what it opened over the page when it is left, as a view made on its visit does.
 */
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf, openApp } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { seedVault } from './support/seed'

/** What the tests use of the page's window, which the tests' TypeScript project (without the DOM library) does not declare. */
interface PageWindow {
  requestIdleCallback(callback: () => void): number
}

/** The IPC channels the page has called so far (the bridge is `fetch`, so the page's resource timing lists every call). */
function channelsCalled(page: Page, prefix: string): Promise<string[]> {
  return page.evaluate(
    (prefix) =>
      performance
        .getEntriesByType('resource')
        .map((entry) => new URL(entry.name).pathname.replace('/__ipc/app:', ''))
        .filter((channel) => channel.startsWith(prefix)),
    prefix
  )
}

/**
 * Waits until the window has loaded the views' chunks (once its first rows are in) and has been idle since,
 * when it makes the kept views ahead. Before, a view reached whose chunk is still loading may read its rows twice:
 * once as its route is chosen, and again as it is set up, when the first read has answered meanwhile.
 */
async function untilViewsLoadedAndIdle(page: Page): Promise<void> {
  await expect.poll(() => page.evaluate(() => performance.getEntriesByType('resource').some((entry) => /\/TokensView-[^/]*\.js$/.test(entry.name)))).toBe(true)
  for (let idle = 0; idle < 2; idle++) {
    await page.evaluate(() => new Promise<void>((resolve) => (globalThis as unknown as PageWindow).requestIdleCallback(() => resolve())))
  }
}

/** Opens the select `testId` of the view shown, leaves the view with `leaveKey`, and expects its menu gone with it. */
async function expectMenuClosedOnLeave(page: Page, testId: string, leaveKey: string, nextHeading: string): Promise<void> {
  await page.getByTestId(testId).click()
  await page.locator('.n-base-select-menu').waitFor()
  await page.keyboard.press(leaveKey)
  await page.getByRole('heading', { name: nextHeading, level: 1 }).waitFor()
  await expect.poll(() => page.locator('.n-base-select-menu').count()).toBe(0)
}

describe.skipIf(!chromiumAvailable)('Views made ahead of their first visit', () => {
  const app = useDesktopApp({ prepare: seedVault })

  /** Holds the page's requests to `url` until `released` settles. */
  async function holdRequests(page: Page, url: string | RegExp, released: Promise<void>): Promise<void> {
    await page.route(url, async (route) => {
      await released
      await route.continue()
    })
  }

  /** Runs `work` in a window of its own opened on `path` (`beforeLoad` as `openApp`'s), which it then closes; no page errors may be left. */
  async function inNewWindow(path: string, work: (page: Page) => Promise<void>, beforeLoad?: (page: Page) => Promise<void>): Promise<void> {
    const page = await openApp(app.browser, app.harness, 'light', path, beforeLoad)
    try {
      await work(page)
      expect(errorsOf(page)).toEqual([])
    } finally {
      await page.context().close()
    }
  }

  it('makes the audit log view while the window is idle, reading nothing; its first visit reads the entries once', async () => {
    const page = app.page
    await page.getByTestId('token-row').first().waitFor()
    // naive-ui puts a component's styles in the page as the first one is made: of the two views, only the audit log has a date range picker.
    await page.locator('head style[cssr-id="n-date-picker"]').waitFor({ state: 'attached' })
    expect(await page.getByTestId('logs-table').count()).toBe(0)
    expect(await channelsCalled(page, 'logs.')).toEqual([])

    await page.keyboard.press('Alt+3')
    await page.getByTestId('log-row').first().waitFor()
    await expect.poll(() => page.locator('.activity canvas').getAttribute('aria-label')).toMatch(/^Audit entries over time: [1-9]\d* in total$/)
    expect((await channelsCalled(page, 'logs.')).sort()).toEqual(['logs.activity', 'logs.entityTypes', 'logs.list'])
    expect(await page.locator('main h1').evaluate((heading) => heading === heading.ownerDocument.activeElement)).toBe(true)

    await expectMenuClosedOnLeave(page, 'filter-entity-type', 'Alt+1', 'Tokens')
    expect(await page.getByTestId('logs-table').count()).toBe(0)
    expect(errorsOf(page)).toEqual([])
  })

  it("reads the audit log once when its entries answer before the view's code has loaded", async () => {
    let listAnswered!: () => void
    const answered = new Promise<void>((resolve) => (listAnswered = resolve))
    // The view's chunk is held until the route's read has answered: the view is then set up after its rows are in.
    const holdLogsView = async (page: Page) => {
      page.on('requestfinished', (request) => request.url().includes('/__ipc/app:logs.list') && listAnswered())
      await holdRequests(page, /\/LogsView-[^/]*\.js$/, answered)
    }
    await inNewWindow(
      '/tokens',
      async (page) => {
        await page.getByTestId('token-row').first().waitFor()
        await page.keyboard.press('Alt+3')
        await page.getByTestId('log-row').first().waitFor()
        await expect.poll(() => page.locator('.activity canvas').getAttribute('aria-label')).toMatch(/^Audit entries over time: [1-9]\d* in total$/)
        expect(await channelsCalled(page, 'logs.list')).toEqual(['logs.list'])
      },
      holdLogsView
    )
  })

  it('claims neither an empty audit log nor a count while its first read is on its way', async () => {
    let releaseRead!: () => void
    const released = new Promise<void>((resolve) => (releaseRead = resolve))
    const holdLogsRead = (page: Page) => holdRequests(page, '**/__ipc/app:logs.list', released)
    await inNewWindow(
      '/tokens',
      async (page) => {
        await page.getByTestId('token-row').first().waitFor()
        await untilViewsLoadedAndIdle(page)
        await page.keyboard.press('Alt+3')
        await page.getByTestId('logs-table').waitFor()
        expect(await page.getByText('The audit log is empty').count()).toBe(0)
        expect(await page.getByTestId('logs-table').locator('.n-pagination').textContent()).not.toMatch(/entr/)
        releaseRead()
        await page.getByTestId('log-row').first().waitFor()
        await expect.poll(() => page.getByTestId('logs-table').locator('.n-pagination').textContent()).toMatch(/\d+ entries/)
      },
      holdLogsRead
    )
  })

  it('reads the audit log afresh when it shows again after the vault was locked and unlocked', async () => {
    await inNewWindow('/tokens', async (page) => {
      await page.getByTestId('token-row').first().waitFor()
      await untilViewsLoadedAndIdle(page)
      for (const key of ['Alt+3', 'Alt+1', 'Alt+3']) {
        await page.keyboard.press(key)
        await page.locator(key === 'Alt+3' ? '[data-test="log-row"]' : '[data-test="token-row"]').first().waitFor()
      }
      await expect.poll(() => channelsCalled(page, 'logs.list')).toHaveLength(2)

      await page.getByTestId('lock').click()
      await page.getByTestId('unlock').click()
      await page.getByTestId('log-row').first().waitFor()
      await expect.poll(() => channelsCalled(page, 'logs.list')).toHaveLength(3)
    })
  })

  it('makes the tokens view ahead in a window opened on the audit log; its first visit reads the tokens once', async () => {
    await inNewWindow('/logs', async (page) => {
      await page.getByTestId('log-row').first().waitFor()
      await untilViewsLoadedAndIdle(page)
      expect(await channelsCalled(page, 'tokens.')).toEqual([])

      await page.keyboard.press('Alt+1')
      await page.getByTestId('token-row').first().waitFor()
      expect(await channelsCalled(page, 'tokens.list')).toEqual(['tokens.list'])
      await expectMenuClosedOnLeave(page, 'filter-type', 'Alt+3', 'Audit logs')
    })
  })
})
