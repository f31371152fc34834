/**
 * Paging by keyboard alone in the Audit logs and Applications tables: Next
 * page by Enter changes the page shown, and focus stays on the pager.
 */
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import type { DesktopHarness } from './support/desktop-harness'
import { expectFocus, tabTo } from './support/keyboard'

/** More applications than one page of 20; creating them also writes more audit entries than one page. */
async function prepare(harness: DesktopHarness): Promise<void> {
  const { applications } = harness.desktop.requireVault().services
  for (let i = 0; i < 22; i++) {
    await applications.create(harness.desktop.actor(), { name: `App ${i}`, type: 'management', permissions: ['log:read'] })
  }
}

describe.skipIf(!chromiumAvailable)('Paging by keyboard', () => {
  const app = useDesktopApp({ prepare })
  const page = () => app.page
  const table = (testId: string) => page().getByTestId(testId)
  const rowsOf = (testId: string) => table(testId).locator('tbody tr')
  const currentPage = (testId: string) => table(testId).locator('.n-pagination-item--active').textContent()

  /** From the view's heading: Next page by Enter shows page 2 (other rows), focus stays on the pager; Previous page shows a full page 1 again (the audit log gains an entry for each read, so not the same rows). */
  async function pageForwardAndBack(testId: string): Promise<void> {
    await rowsOf(testId).first().waitFor()
    expect(await rowsOf(testId).count()).toBe(20)
    const firstRowOfPage1 = await rowsOf(testId).first().textContent()
    await tabTo(page(), `[data-test=${testId}] [aria-label="Next page"]`, { maxPresses: 80 })
    await page().keyboard.press('Enter')
    await expect.poll(() => currentPage(testId)).toBe('2')
    await expect.poll(() => rowsOf(testId).first().textContent()).not.toBe(firstRowOfPage1)
    await expectFocus(page(), `[data-test=${testId}] .n-pagination-item`)

    await tabTo(page(), `[data-test=${testId}] [aria-label="Previous page"]`, { backwards: true })
    await page().keyboard.press('Enter')
    await expect.poll(() => currentPage(testId)).toBe('1')
    await expect.poll(() => rowsOf(testId).count()).toBe(20)
    await expectFocus(page(), `[data-test=${testId}] .n-pagination-item`)
  }

  it('pages through the audit log with the pager', async () => {
    await page().locator('main h1').waitFor()
    await page().keyboard.press('Alt+3')
    await expectFocus(page(), 'main h1')
    await pageForwardAndBack('logs-table')
  })

  it('pages through the applications with the pager', async () => {
    await page().keyboard.press('Alt+4')
    await expectFocus(page(), 'main h1')
    await pageForwardAndBack('applications-table')
    expect(errorsOf(page())).toEqual([])
  })
})
