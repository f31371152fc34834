/**
 * Applications, sessions and members by keyboard alone: each action, what
 * the user then sees, and where focus lands.
 */
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { describeFocus, expectFocus, tabTo } from './support/keyboard'
import { seedVault } from './support/seed'

describe.skipIf(!chromiumAvailable)('Administration by keyboard', () => {
  const app = useDesktopApp({ prepare: seedVault })
  const page = () => app.page
  const applicationsTable = () => page().getByTestId('applications-table')

  /** Opens the focused naive-ui select and picks the option it highlights first. */
  async function pickFirstOption(): Promise<void> {
    await page().keyboard.press('Enter')
    await page().locator('.n-base-select-option:visible').first().waitFor()
    await page().keyboard.press('Enter')
  }

  /** Confirms the key shown once; focus must then be back on a page control. */
  async function storeKey(): Promise<string> {
    const dialog = page().getByTestId('key-once')
    await dialog.waitFor()
    const key = (await dialog.getByTestId('secret').textContent())!
    await tabTo(page(), /"I have stored the key"$/)
    await page().keyboard.press('Enter')
    await dialog.waitFor({ state: 'detached' })
    return key
  }

  it('creates an application; after its key, focus is back on New application', async () => {
    await page().keyboard.press('Alt+4')
    await expectFocus(page(), 'main h1')
    await tabTo(page(), '[data-test=new-application]')
    await page().keyboard.press('Enter')
    await page().getByTestId('application-form').waitFor()
    await tabTo(page(), '[data-test=application-name] input')
    await page().keyboard.type('Reporting job')
    await tabTo(page(), /\(checkbox\).*"read"/)
    await page().keyboard.press(' ')
    await tabTo(page(), '[data-test=application-submit]')
    await page().keyboard.press('Enter')
    expect(await storeKey()).toMatch(/^key_/)
    await expect.poll(() => applicationsTable().textContent()).toContain('Reporting job')
    await expectFocus(page(), '[data-test=new-application]')
  })

  it('edits an application; focus comes back to its Edit button', async () => {
    await tabTo(page(), /"Edit"$/)
    await page().keyboard.press('Enter')
    await page().getByTestId('application-form').waitFor()
    await tabTo(page(), '[data-test=application-name] input')
    await page().keyboard.press('ControlOrMeta+A')
    await page().keyboard.type('Nightly reports')
    await tabTo(page(), '[data-test=application-submit]')
    await page().keyboard.press('Enter')
    await expect.poll(() => applicationsTable().textContent()).toContain('Nightly reports')
    await expectFocus(page(), /"Edit"$/)
  })

  it('regenerates a key after confirming; focus comes back to the row', async () => {
    await tabTo(page(), '[data-test=regenerate]')
    await page().keyboard.press('Enter')
    await page().locator('.n-dialog').waitFor()
    await tabTo(page(), /"Regenerate"$/)
    await page().keyboard.press('Enter')
    expect(await storeKey()).toMatch(/^key_/)
    // Back on the row's New key, or on New application if the row was drawn anew.
    await expectFocus(page(), '[data-test=regenerate], [data-test=new-application]')
  })

  it('creates a session from the keyboard', async () => {
    await page().keyboard.press('Alt+5')
    await expectFocus(page(), 'main h1')
    await tabTo(page(), /\[data-test=public-application\]/)
    await pickFirstOption()
    await tabTo(page(), '[data-test=create-session]')
    await page().keyboard.press('Enter')
    const row = page().getByTestId('sessions-table').locator('tbody tr').first()
    await expect.poll(() => row.textContent()).toContain('not authorized')
  })

  it('invites a member and finds the invitation with the arrow keys on the tabs', async () => {
    await page().keyboard.press('Alt+6')
    await expectFocus(page(), 'main h1')
    await tabTo(page(), '[data-test=invite]')
    await page().keyboard.press('Enter')
    await page().keyboard.type('grace@example.com')
    await page().keyboard.press('Enter')
    await expect.poll(() => page().getByRole('tab', { name: /Invitations/ }).textContent()).toContain('(2)')
    // The dialog gives focus back to Invite once it has gone; the view shows the invitations.
    await page().locator('[aria-modal="true"]').waitFor({ state: 'detached' })
    await expectFocus(page(), '[data-test=invite]')

    await tabTo(page(), '[role=tab][aria-selected=true]')
    expect(await describeFocus(page())).toMatch(/"Invitations \(2\)"/)
    await page().keyboard.press('ArrowLeft')
    await expectFocus(page(), '#members-tab-members')
    await page().keyboard.press('ArrowRight')
    await expectFocus(page(), '#members-tab-invitations')
    const invitations = page().getByTestId('invitations-table')
    await expect.poll(() => invitations.textContent()).toContain('grace@example.com')
    expect(errorsOf(page())).toEqual([])
  })
})
