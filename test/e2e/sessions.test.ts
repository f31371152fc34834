import { describe, expect, it } from 'vitest'
import { chooseOption, chromiumAvailable, errorsOf, screenshot } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { callRest } from './support/rest'
import { seedVault } from './support/seed'

describe.skipIf(!chromiumAvailable)('Sessions workflow', () => {
  const app = useDesktopApp({ view: 'Sessions', prepare: seedVault })

  it('creates a session as a public application, authorizes it as a private one, its key then works until it is revoked', async () => {
    await chooseOption(app.page, app.page.getByTestId('public-application'), 'Payment form')
    await app.page.getByTestId('create-session').click()
    const row = app.page.getByTestId('sessions-table').locator('tbody tr').first()
    await expect.poll(() => row.textContent()).toContain('not authorized')
    expect(await row.getByTestId('countdown').textContent()).toMatch(/expires in [23]:\d\d/)
    const sessionKey = (await row.getByTestId('session-key').textContent())!
    const base = await app.harness.serviceUrl()
    expect((await callRest(base, 'POST', '/tokens', sessionKey, { type: 'token', data: 'x' })).status).toBe(401)

    await chooseOption(app.page, app.page.getByTestId('private-application'), 'Checkout backend')
    await app.page.getByTestId('permissions-picker').getByText('create', { exact: true }).click()
    await app.page.getByTestId('authorize-session').click()
    await expect.poll(() => row.textContent()).toContain('authorized by Checkout backend')
    await screenshot(app.page, 'session-authorized', 'light')

    expect((await callRest(base, 'POST', '/tokens', sessionKey, { type: 'token', data: 'collected-in-browser' })).status).toBe(201)
    expect((await callRest(base, 'GET', '/tokens', sessionKey)).status).toBe(403)

    await row.getByTestId('revoke-session').click()
    await app.page.locator('.n-dialog').getByRole('button', { name: 'Revoke' }).click()
    await expect.poll(async () => (await callRest(base, 'POST', '/tokens', sessionKey, { type: 'token', data: 'after revocation' })).status).toBe(401)
    await expect.poll(() => app.page.getByTestId('sessions-table').textContent()).toContain('No active sessions')
    expect(errorsOf(app.page)).toEqual([])
  })
})
