import { describe, expect, it } from 'vitest'
import { chromiumAvailable, confirmDialog, errorsOf, screenshot } from './support/browser'
import { useDesktopApp } from './support/desktop-app'

describe.skipIf(!chromiumAvailable)('Members and invitations workflow', () => {
  const app = useDesktopApp({ view: 'Members' })

  it('lists the OWNER, who cannot be removed', async () => {
    const table = app.page.getByTestId('members-table')
    await expect.poll(() => table.textContent()).toContain('owner@example.com')
    expect(await table.getByRole('button', { name: 'Remove' }).count()).toBe(0)
  })

  it('invites a member, shows the mail in the outbox, resends and deletes the invitation', async () => {
    await app.page.getByTestId('invite').click()
    await app.page.getByTestId('invite-email').locator('input').fill('grace@example.com')
    await app.page.getByTestId('invite-submit').click()
    const invitations = app.page.getByTestId('invitations-table')
    await expect.poll(() => invitations.textContent()).toContain('grace@example.com')
    expect(await invitations.textContent()).toContain('PENDING')

    await app.page.locator('.n-tabs-tab', { hasText: 'Outbox' }).click()
    const outbox = app.page.getByTestId('outbox-table')
    await expect.poll(() => outbox.textContent()).toContain('grace@example.com')
    expect(await outbox.textContent()).toContain('waiting')
    await screenshot(app.page, 'members-outbox', 'light')

    await app.page.locator('.n-tabs-tab', { hasText: 'Invitations' }).click()
    const mailIds = async () =>
      (await app.harness.desktop.requireVault().services.mail.listOutbox({ page: 1, size: 100 })).data.filter((mail) => mail.recipient === 'grace@example.com').map((mail) => mail.id)
    const [first] = await mailIds()
    await invitations.getByTestId('resend').click()
    await expect.poll(() => app.page.locator('.n-notification').getByText('Invitation sent again').isVisible()).toBe(true)
    // The earlier mail's link is dead, so a new mail replaces it in the outbox.
    await expect.poll(mailIds).toEqual([expect.not.stringMatching(first)])

    await invitations.getByTestId('delete-invitation').click()
    await confirmDialog(app.page, 'Delete')
    await expect.poll(() => app.page.getByText('No invitations').isVisible()).toBe(true)
    expect(errorsOf(app.page)).toEqual([])
  })

  it('shows a member who accepted an invitation, and removes them', async () => {
    await app.harness.desktop.requireVault().services.invitations.create(app.harness.desktop.actor(), { email: 'ada@example.com' })
    const [mail] = (await app.harness.desktop.requireVault().services.mail.listOutbox({ page: 1, size: 100 })).data.filter((entry) => entry.recipient === 'ada@example.com')
    const token = new URL(mail.link!).searchParams.get('token')
    const accepted = await fetch(`${await app.harness.serviceUrl()}/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, first_name: 'Ada', last_name: 'Lovelace' })
    })
    expect(accepted.status).toBeLessThan(300)

    await app.page.getByRole('button', { name: 'Refresh' }).click()
    await app.page.locator('.n-tabs-tab', { hasText: 'Members' }).click()
    const table = app.page.getByTestId('members-table')
    const row = table.locator('tr', { hasText: 'Ada Lovelace' })
    await row.waitFor()
    await screenshot(app.page, 'members-with-admin', 'light')
    await row.getByRole('button', { name: 'Remove' }).click()
    await confirmDialog(app.page, 'Remove')
    await expect.poll(() => table.textContent()).not.toContain('Ada Lovelace')
    expect(await table.textContent()).toContain('owner@example.com')
  })
})
