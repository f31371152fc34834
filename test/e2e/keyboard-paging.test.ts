/**
 * Paging by keyboard alone in the Audit logs, Applications, Sessions and
 * Members tables: Next
 * page by Enter changes the page shown, and focus stays on the pager.
 */
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import type { DesktopHarness } from './support/desktop-harness'
import { expectFocus, tabTo } from './support/keyboard'

/** More than one page of 20 rows in each table paged here. */
const ROWS = 22

/**
 * More applications than one page (creating them also writes more audit
 * entries than one page), more sessions of a public application, and more
 * members, each invited and signed up through the link in their mail.
 */
async function prepare(harness: DesktopHarness): Promise<void> {
  const { applications, sessions, invitations, mail } = harness.desktop.requireVault().services
  const owner = harness.desktop.actor()
  for (let i = 0; i < ROWS; i++) {
    await applications.create(owner, { name: `App ${i}`, type: 'management', permissions: ['log:read'] })
  }
  const storefront = await applications.create(owner, { name: 'Storefront', type: 'public', permissions: ['token:create'] })
  const asStorefront = await applications.actingAs(owner, storefront.id, 'public')
  for (let i = 0; i < ROWS; i++) await sessions.create(asStorefront, owner)
  for (let i = 0; i < ROWS; i++) await invitations.create(owner, { email: `member${i}@example.com` })
  for (const [index, invitation] of (await mail.listOutbox({ page: 1, size: 100 })).data.entries()) {
    await invitations.accept({ token: new URL(invitation.link!).searchParams.get('token')!, first_name: 'Member', last_name: `No. ${index + 1}` })
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
    const page1 = await table(testId).locator('tbody').textContent()
    await tabTo(page(), `[data-test=${testId}] [aria-label="Next page"]`, { maxPresses: 120 })
    await page().keyboard.press('Enter')
    await expect.poll(() => currentPage(testId)).toBe('2')
    // The whole page, not its first row: rows of alike sessions read the same.
    await expect.poll(() => table(testId).locator('tbody').textContent()).not.toBe(page1)
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
  })

  it('pages through the sessions with the pager', async () => {
    await page().keyboard.press('Alt+5')
    await expectFocus(page(), 'main h1')
    await pageForwardAndBack('sessions-table')
  })

  it('pages through the members with the pager', async () => {
    await page().keyboard.press('Alt+6')
    await expectFocus(page(), 'main h1')
    await pageForwardAndBack('members-table')
    expect(errorsOf(page())).toEqual([])
  })
})
