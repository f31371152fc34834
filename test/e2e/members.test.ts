import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, confirmDialog, errorsOf, launchBrowser, navigate, openApp, screenshot } from './support/browser'
import { startDesktopHarness, type DesktopHarness } from './support/desktop-harness'

describe.skipIf(!chromiumAvailable)('Members and invitations workflow', () => {
  let browser: Browser
  let harness: DesktopHarness
  let page: Page

  beforeAll(async () => {
    harness = await startDesktopHarness()
    browser = await launchBrowser()
    page = await openApp(browser, harness)
    await navigate(page, 'Members')
  })

  afterAll(async () => {
    await browser?.close()
    await harness?.stop()
  })

  it('lists the OWNER, who cannot be removed', async () => {
    const table = page.getByTestId('members-table')
    await expect.poll(() => table.textContent()).toContain('owner@example.com')
    expect(await table.getByRole('button', { name: 'Remove' }).count()).toBe(0)
  })

  it('invites a member, shows the mail in the outbox, resends and deletes the invitation', async () => {
    await page.getByTestId('invite').click()
    await page.getByTestId('invite-email').locator('input').fill('grace@example.com')
    await page.getByTestId('invite-submit').click()
    const invitations = page.getByTestId('invitations-table')
    await expect.poll(() => invitations.textContent()).toContain('grace@example.com')
    expect(await invitations.textContent()).toContain('PENDING')

    await page.locator('.n-tabs-tab', { hasText: 'Outbox' }).click()
    const outbox = page.getByTestId('outbox-table')
    await expect.poll(() => outbox.textContent()).toContain('grace@example.com')
    expect(await outbox.textContent()).toContain('waiting')
    await screenshot(page, 'members-outbox', 'light')

    await page.locator('.n-tabs-tab', { hasText: 'Invitations' }).click()
    const mailIds = async () =>
      (await harness.desktop.requireVault().services.mail.listOutbox()).filter((mail) => mail.recipient === 'grace@example.com').map((mail) => mail.id)
    const [first] = await mailIds()
    await invitations.getByTestId('resend').click()
    await expect.poll(() => page.getByText('Invitation sent again').isVisible()).toBe(true)
    // The earlier mail's link is dead, so a new mail replaces it in the outbox.
    await expect.poll(mailIds).toEqual([expect.not.stringMatching(first)])

    await invitations.getByTestId('delete-invitation').click()
    await confirmDialog(page, 'Delete')
    await expect.poll(() => page.getByText('No invitations').isVisible()).toBe(true)
    expect(errorsOf(page)).toEqual([])
  })

  it('shows a member who accepted an invitation, and removes them', async () => {
    await harness.desktop.requireVault().services.invitations.create(harness.desktop.actor(), { email: 'ada@example.com' })
    const [mail] = (await harness.desktop.requireVault().services.mail.listOutbox()).filter((entry) => entry.recipient === 'ada@example.com')
    const token = new URL(mail.link!).searchParams.get('token')
    const accepted = await fetch(`${await harness.serviceUrl()}/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, first_name: 'Ada', last_name: 'Lovelace' })
    })
    expect(accepted.status).toBeLessThan(300)

    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.locator('.n-tabs-tab', { hasText: 'Members' }).click()
    const table = page.getByTestId('members-table')
    const row = table.locator('tr', { hasText: 'Ada Lovelace' })
    await row.waitFor()
    await screenshot(page, 'members-with-admin', 'light')
    await row.getByRole('button', { name: 'Remove' }).click()
    await confirmDialog(page, 'Remove')
    await expect.poll(() => table.textContent()).not.toContain('Ada Lovelace')
    expect(await table.textContent()).toContain('owner@example.com')
  })
})
