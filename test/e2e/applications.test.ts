import { describe, expect, it } from 'vitest'
import { chromiumAvailable, confirmDialog, errorsOf, navigate, screenshot } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { callRest } from './support/rest'
import { listApplicationsQuery } from '../../src/shared/contracts'
import { parse } from '../../src/main/app'

describe.skipIf(!chromiumAvailable)('Applications workflow', () => {
  const app = useDesktopApp({ view: 'Applications' })
  let key: string

  it('creates a private application with a permissions picker and shows its key once', async () => {
    await app.page.getByTestId('new-application').click()
    const form = app.page.getByTestId('application-form')
    await form.getByTestId('application-name').locator('input').fill('Reporting job')
    const picker = form.getByTestId('permissions-picker')
    // A private application is offered token permissions only.
    expect(await picker.getByText('create', { exact: true }).count()).toBe(1)
    expect(await picker.getByText('log', { exact: true }).count()).toBe(0)
    await picker.getByText('create', { exact: true }).click()
    await picker.getByText('read', { exact: true }).click()
    await screenshot(app.page, 'application-form', 'light')
    await form.getByTestId('application-submit').click()

    const dialog = app.page.getByTestId('key-once')
    key = (await dialog.getByTestId('secret').textContent())!
    expect(key).toMatch(/^key_private/)
    await screenshot(app.page, 'application-key', 'light')
    await dialog.getByRole('button', { name: 'I have stored the key' }).click()
    await expect.poll(() => app.page.getByTestId('applications-table').textContent()).toContain('Reporting job')
    expect(await app.page.getByTestId('applications-table').textContent()).not.toContain(key)
  })

  it('lets the key call the REST service, and the call appears in the audit log', async () => {
    const created = await callRest(await app.harness.serviceUrl(), 'POST', '/tokens', key, { type: 'token', data: 'order-7781' })
    expect(created.status).toBe(201)

    await navigate(app.page, 'Audit logs')
    await app.page.getByTestId('filter-entity-id').locator('input').fill(created.body.id)
    await app.page.getByTestId('apply-log-filters').click()
    const table = app.page.getByTestId('logs-table')
    await expect.poll(() => table.textContent()).toContain('Token created')
    const application = (await app.harness.desktop.requireVault().services.applications.list(app.harness.desktop.actor(), parse(listApplicationsQuery, { type: 'private' }))).data[0]
    // The actor column shows the application's type and short id, and the whole id on hover.
    await expect.poll(() => table.textContent()).toContain(`application ${application.id.slice(0, 8)}`)
    expect(await table.locator(`[title="application ${application.id}"]`).count()).toBeGreaterThan(0)
  })

  it('regenerates the key: the new one works and the old one is refused at once', async () => {
    await navigate(app.page, 'Applications')
    const row = app.page.getByTestId('applications-table').locator('tr', { hasText: 'Reporting job' })
    await row.getByTestId('regenerate').click()
    await confirmDialog(app.page, 'Regenerate')
    const dialog = app.page.getByTestId('key-once')
    const fresh = (await dialog.getByTestId('secret').textContent())!
    await dialog.getByRole('button', { name: 'I have stored the key' }).click()

    const base = await app.harness.serviceUrl()
    expect((await callRest(base, 'GET', '/tokens', key)).status).toBe(401)
    expect((await callRest(base, 'GET', '/tokens', fresh)).status).toBe(200)
    expect(errorsOf(app.page)).toEqual([])
    key = fresh
  })

  it('rotates with overlap: a key added beside the current one, then the old one deleted', async () => {
    const row = app.page.getByTestId('applications-table').locator('tr', { hasText: 'Reporting job' })
    await row.getByTestId('keys').click()
    const keys = app.page.getByTestId('application-keys')
    const table = keys.getByTestId('keys-table')
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1)
    const oldKeyId = (await table.locator('tbody tr code').textContent())!

    await keys.getByTestId('add-key').click()
    const dialog = app.page.getByTestId('key-once')
    const added = (await dialog.getByTestId('secret').textContent())!
    await dialog.getByRole('button', { name: 'I have stored the key' }).click()
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2)
    const base = await app.harness.serviceUrl()
    expect((await callRest(base, 'GET', '/tokens', key)).status).toBe(200)
    expect((await callRest(base, 'GET', '/tokens', added)).status).toBe(200)

    await keys.getByRole('button', { name: `Delete key ${oldKeyId}` }).click()
    await confirmDialog(app.page, 'Delete')
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1)
    expect((await callRest(base, 'GET', '/tokens', key)).status).toBe(401)
    expect((await callRest(base, 'GET', '/tokens', added)).status).toBe(200)
    expect(errorsOf(app.page)).toEqual([])
  })
})
