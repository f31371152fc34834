import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { chooseOption, chromiumAvailable, errorsOf, navigate } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import type { DesktopHarness } from './support/desktop-harness'
import { seedVault } from './support/seed'

/** More invitations than one page of 20 holds: 25 with the seeded one. */
const INVITATIONS = 25

async function prepare(harness: DesktopHarness): Promise<void> {
  await seedVault(harness)
  const services = harness.desktop.requireVault().services
  for (let i = 1; i < INVITATIONS; i++) await services.invitations.create(harness.desktop.actor(), { email: `colleague${i}@example.com` })
}

/** The pager under a table, once the table has read its first page. */
async function pagerOf(page: Page, table: string) {
  const pager = page.getByTestId(table).locator('.n-pagination')
  await pager.waitFor()
  return pager
}

const openTab = (page: Page, title: string) => page.locator('.n-tabs-tab', { hasText: title }).click()

describe.skipIf(!chromiumAvailable)('Paging in every table', () => {
  const app = useDesktopApp({ prepare })

  it('gives every paged table the same pager: a page-size picker and the number of rows', async () => {
    const tables: [view: string, tab: string | undefined, table: string, count: RegExp][] = [
      ['Tokens', undefined, 'tokens-table', /^6 tokens/],
      ['Audit logs', undefined, 'logs-table', /^\d[\d,]* entries/],
      ['Applications', undefined, 'applications-table', /^4 applications/],
      ['Sessions', undefined, 'sessions-table', /^0 sessions/],
      ['Members', 'Members', 'members-table', /^1 member\b/],
      ['Members', 'Invitations', 'invitations-table', /^25 invitations/],
      ['Members', 'Outbox', 'outbox-table', /^25 mails/]
    ]
    for (const [view, tab, table, count] of tables) {
      await navigate(app.page, view)
      if (tab) await openTab(app.page, tab)
      const pager = await pagerOf(app.page, table)
      await expect.poll(() => pager.locator('.n-pagination-prefix').textContent(), { message: table }).toMatch(count)
      expect(await pager.locator('.n-base-selection').textContent(), table).toContain('20 / page')
    }
    expect(errorsOf(app.page)).toEqual([])
  })

  it('reads the invitations again with the page size picked, and from page 1 when the status filter changes', async () => {
    await navigate(app.page, 'Members')
    await openTab(app.page, 'Invitations')
    const table = app.page.getByTestId('invitations-table')
    const pager = await pagerOf(app.page, 'invitations-table')
    const rows = table.locator('tbody tr')
    await expect.poll(() => rows.count()).toBe(20)

    await chooseOption(app.page, pager.locator('.n-base-selection'), '50 / page')
    await expect.poll(() => rows.count()).toBe(INVITATIONS)

    await chooseOption(app.page, pager.locator('.n-base-selection'), '20 / page')
    await pager.locator('.n-pagination-item', { hasText: /^2$/ }).click()
    await expect.poll(() => rows.count()).toBe(INVITATIONS - 20)
    await chooseOption(app.page, app.page.getByTestId('invitation-status'), 'Pending')
    await expect.poll(() => pager.locator('.n-pagination-item--active').textContent()).toBe('1')
    await expect.poll(() => rows.count()).toBe(20)
    expect(errorsOf(app.page)).toEqual([])
  })
})
