/**
 * Tokens by keyboard alone: create, edit, reveal (focus on Hide, then back on
 * Reveal), delete, and paging through the table; each asserts what the user
 * sees and where focus lands.
 */
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import type { DesktopHarness } from './support/desktop-harness'
import { describeFocus, expectFocus, tabTo } from './support/keyboard'

/** More tokens than one page of 20. */
async function prepare(harness: DesktopHarness): Promise<void> {
  const { tokens } = harness.desktop.requireVault().services
  for (let i = 0; i < 22; i++) await tokens.create(harness.desktop.actor(), { type: 'token', data: `ref-${i}`, metadata: { seq: String(i) } })
}

describe.skipIf(!chromiumAvailable)('Tokens by keyboard', () => {
  const app = useDesktopApp({ prepare })
  const rows = () => app.page.getByTestId('token-row')
  const detail = () => app.page.getByTestId('token-detail')

  it('creates a token from the form; focus goes back to New token', async () => {
    await rows().first().waitFor()
    await tabTo(app.page, '[data-test=new-token]')
    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('token-form').waitFor()
    await tabTo(app.page, '[data-test=token-data] textarea')
    await app.page.keyboard.type('"555-12-3456"')
    await tabTo(app.page, '[data-test=token-submit]')
    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('token-form').waitFor({ state: 'detached' })
    await expect.poll(() => app.page.getByTestId('tokens-table').textContent()).toContain('23 tokens')
    await expectFocus(app.page, '[data-test=new-token]')
  })

  it('opens the newest token, reveals it (focus on Hide) and hides it (focus back on Reveal)', async () => {
    await tabTo(app.page, '[data-test=token-row]')
    await app.page.keyboard.press('Enter')
    await detail().waitFor()
    await tabTo(app.page, '[data-test=reveal]')
    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('reveal-dialog').waitFor()
    await expectFocus(app.page, '[data-test=reveal-reason] input')
    await app.page.keyboard.type('Support ticket 4821')
    await app.page.keyboard.press('Enter')
    await expect.poll(() => detail().getByTestId('revealed-data').textContent()).toBe('555-12-3456')
    await expectFocus(app.page, '[data-test=hide]')

    await app.page.keyboard.press('Enter')
    await detail().getByTestId('revealed').waitFor({ state: 'detached' })
    await expectFocus(app.page, '[data-test=reveal]')
  })

  it('edits the open token: focus comes back to Edit, the drawer shows the change', async () => {
    await tabTo(app.page, '[data-test=edit-token]')
    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('token-form').waitFor()
    await tabTo(app.page, 'input[placeholder^="{{"]')
    await app.page.keyboard.type('{{ data | reveal_last: 2 }}')
    await tabTo(app.page, '[data-test=token-submit]')
    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('token-form').waitFor({ state: 'detached' })
    await expect.poll(() => detail().getByTestId('detail-masked').textContent()).toBe('XXXXXXXXX56')
    await expectFocus(app.page, '[data-test=edit-token]')
  })

  it('deletes the open token after confirming; focus lands in the table, not on the page body', async () => {
    const id = (await detail().getByTestId('detail-id').textContent())!
    await tabTo(app.page, '[data-test=delete-token]')
    await app.page.keyboard.press('Enter')
    await app.page.locator('.n-dialog').waitFor()
    await tabTo(app.page, /^button "Delete"/)
    await app.page.keyboard.press('Enter')
    await detail().waitFor({ state: 'detached' })
    await expect.poll(() => app.page.getByTestId('tokens-table').textContent()).toContain('22 tokens')
    expect(await app.page.getByTestId('tokens-table').textContent()).not.toContain(id)
    expect(await describeFocus(app.page)).not.toBe('body')
    await expectFocus(app.page, '[data-test=token-row], [data-test=new-token]')
  })

  it('pages through the table with the pager', async () => {
    await tabTo(app.page, '[aria-label="Next page"]')
    await app.page.keyboard.press('Enter')
    await expect.poll(() => rows().count()).toBe(2)
    await expectFocus(app.page, '.n-pagination-item')
    await tabTo(app.page, '[aria-label="Previous page"]', { backwards: true })
    await app.page.keyboard.press('Enter')
    await expect.poll(() => rows().count()).toBe(20)
    expect(errorsOf(app.page)).toEqual([])
  })
})
