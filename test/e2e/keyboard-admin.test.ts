/**
 * Applications, sessions and members by keyboard alone: each action, what
 * the user then sees, and where focus lands.
 */
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf, expectNotification } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { describeFocus, DIALOG_CONFIRM, expectFocus, pickOptionNamed, tabTo } from './support/keyboard'
import type { Route } from 'playwright-core'
import { seedVault } from './support/seed'

describe.skipIf(!chromiumAvailable)('Administration by keyboard', () => {
  const app = useDesktopApp({ prepare: seedVault })
  const page = () => app.page
  const applicationsTable = () => page().getByTestId('applications-table')

  /** Invites `email` and signs them up through the link in their mail, as they would: a member to remove. */
  async function addMember(email: string): Promise<void> {
    const services = app.harness.desktop.requireVault().services
    await services.invitations.create(app.harness.desktop.actor(), { email })
    const mail = (await services.mail.listOutbox({ page: 1, size: 100 })).data.find((m) => m.recipient === email)!
    await services.invitations.accept({ token: new URL(mail.link!).searchParams.get('token')!, first_name: 'Linus', last_name: 'Torvalds' })
  }

  /** Opens the focused naive-ui select and picks the option it highlights first. */
  async function pickFirstOption(): Promise<void> {
    await page().keyboard.press('Enter')
    await page().locator('.n-base-select-option:visible').first().waitFor()
    await page().keyboard.press('Enter')
  }

  /**
   * Holds the window's reads of the applications list until the returned
   * function is called (they then pass straight through): a slow machine,
   * where the table reads again last.
   */
  async function holdListReads(): Promise<() => void> {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    await page().route('**/__ipc/app:applications.list', async (route: Route) => {
      await released
      await route.continue()
    })
    return release
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
    await page().getByTestId('token-row').first().waitFor()
    await page().keyboard.press('Alt+4')
    await expectFocus(page(), 'main h1')
    await tabTo(page(), '[data-test=new-application]')
    await page().keyboard.press('Enter')
    await page().getByTestId('application-form').waitFor()
    await tabTo(page(), '[data-test=application-name] input')
    await page().keyboard.type('Reporting job')
    await tabTo(page(), /\(checkbox\).*"read"/)
    await page().keyboard.press(' ')
    const releaseListReads = await holdListReads()
    await tabTo(page(), '[data-test=application-submit]')
    await page().keyboard.press('Enter')
    // The key's dialog comes alone, once the form has gone, without waiting for the table.
    const dialog = page().getByTestId('key-once')
    await dialog.waitFor()
    expect(await page().getByTestId('application-form').isVisible()).toBe(false)
    expect(await dialog.getByTestId('secret').textContent()).toMatch(/^key_/)
    await tabTo(page(), /"I have stored the key"$/)
    releaseListReads()
    await expect.poll(() => applicationsTable().textContent()).toContain('Reporting job')
    // The table coming back moves nothing: Enter still stores the key.
    expect(await describeFocus(page())).toMatch(/"I have stored the key"$/)
    await page().keyboard.press('Enter')
    await dialog.waitFor({ state: 'detached' })
    await expectFocus(page(), '[data-test=new-application]')
  })

  it('edits an application; focus comes back to its Edit button, and stays where the user moves it as the form leaves', async () => {
    await tabTo(page(), /"Edit"$/)
    await page().keyboard.press('Enter')
    await page().getByTestId('application-form').waitFor()
    await tabTo(page(), '[data-test=application-name] input')
    await page().keyboard.press('ControlOrMeta+A')
    await page().keyboard.type('Nightly reports')
    const releaseListReads = await holdListReads()
    // A slow machine: the form takes its time to leave, and the user tabs on meanwhile.
    const slowLeave = await page().addStyleTag({ content: '.n-modal.fade-in-scale-up-transition-leave-active { transition-duration: 2s !important }' })
    await tabTo(page(), '[data-test=application-submit]')
    await page().keyboard.press('Enter')
    // Saved, the form closes at once, though the table has not read the change yet.
    await expectNotification(page(), 'Application saved')
    await expectFocus(page(), /"Edit"$/)
    await page().keyboard.press('Tab')
    await expectFocus(page(), '[data-test=keys]')
    const form = page().getByTestId('application-form')
    await form.waitFor({ state: 'hidden' })
    // Once gone, the form leaves focus where the user put it: a key pressed now goes to Keys, not to Edit.
    expect(await describeFocus(page())).toMatch(/\[data-test=keys\] "Keys"$/)
    await slowLeave.evaluate((style) => (style as unknown as { remove(): void }).remove())
    releaseListReads()
    await expect.poll(() => applicationsTable().textContent()).toContain('Nightly reports')
    await page().keyboard.press('Shift+Tab')
    await expectFocus(page(), /"Edit"$/)
  })

  it('regenerates a key after confirming; focus comes back to the row', async () => {
    await tabTo(page(), '[data-test=regenerate]')
    await page().keyboard.press('Enter')
    await page().locator('.n-dialog').waitFor()
    await tabTo(page(), /"Regenerate"$/)
    await page().keyboard.press('Enter')
    // The key's dialog opens only once the confirmation has gone: as it goes it gives focus back to the page.
    await page().getByTestId('key-once').waitFor()
    expect(await page().locator('.n-dialog').count()).toBe(0)
    expect(await storeKey()).toMatch(/^key_/)
    // Back in the table (the row's New key, or another of its buttons once the row is drawn anew), or on New application.
    await expectFocus(page(), '[data-test=applications-table] button, button[data-test=applications-table], [data-test=regenerate], [data-test=new-application]')
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

  it('authorizes that session as a private application; focus goes to the session choice', async () => {
    await tabTo(page(), /\[data-test=session-nonce\]/)
    await pickFirstOption()
    // Not the first private application: the one made above holds only "read", so it cannot grant "create".
    await tabTo(page(), /\[data-test=private-application\]/)
    await pickOptionNamed(page(), 'Checkout backend')
    await tabTo(page(), /\(checkbox\).*"create"/)
    await page().keyboard.press(' ')
    await tabTo(page(), '[data-test=authorize-session]')
    await page().keyboard.press('Enter')
    const row = page().getByTestId('sessions-table').locator('tbody tr').first()
    await expect.poll(() => row.textContent()).toContain('authorized by Checkout backend')
    await expectFocus(page(), '[data-test=session-nonce] [tabindex]')
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

  it('resends an invitation: it says so and focus stays on Resend', async () => {
    await tabTo(page(), '[data-test=resend]')
    await page().keyboard.press('Enter')
    await expectNotification(page(), 'Invitation sent again')
    await expectFocus(page(), '[data-test=resend]')
  })

  it('deletes an invitation after confirming; focus goes to the invitations tab', async () => {
    await tabTo(page(), '[data-test=delete-invitation]')
    await page().keyboard.press('Enter')
    await page().locator('.n-dialog').waitFor()
    await tabTo(page(), DIALOG_CONFIRM)
    await page().keyboard.press('Enter')
    await expect.poll(() => page().getByRole('tab', { name: /Invitations/ }).textContent()).toContain('(1)')
    await page().locator('.n-dialog').waitFor({ state: 'detached' })
    // Its row and Delete button are gone: focus is on the list's tab, not lost to the page.
    await expectFocus(page(), '#members-tab-invitations')
  })

  it('removes a member after confirming; focus goes to the members tab', async () => {
    await addMember('linus@example.com')
    await page().keyboard.press('ArrowLeft')
    await expectFocus(page(), '#members-tab-members')
    await tabTo(page(), /"Refresh"/, { backwards: true })
    await page().keyboard.press('Enter')
    const members = page().getByTestId('members-table')
    await expect.poll(() => members.textContent()).toContain('linus@example.com')
    await tabTo(page(), /"Remove"$/)
    await page().keyboard.press('Enter')
    await page().locator('.n-dialog').waitFor()
    await tabTo(page(), DIALOG_CONFIRM)
    await page().keyboard.press('Enter')
    await expect.poll(() => members.textContent()).not.toContain('linus@example.com')
    await page().locator('.n-dialog').waitFor({ state: 'detached' })
    await expectNotification(page(), 'Member removed')
    await expectFocus(page(), '#members-tab-members')
    expect(errorsOf(page())).toEqual([])
  })
})
