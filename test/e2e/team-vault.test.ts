/**
 * The window on a team vault: a real `tessera serve` on a fresh PostgreSQL
 * database, connected from Settings by keyboard alone. The sidebar says which
 * vault the window is on, the views show the server's data, the embedded
 * vault's own controls are left out, and every screen passes axe in both themes.
 * The optional CA certificate field is labelled, described and usable by
 * keyboard, and what the main process refuses in it is named like any field.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, serve, terminate, type Served } from '../helpers/cli'
import { createTestDatabase } from '../helpers/postgres'
import { axeViolations, fieldsWithoutLabel } from './support/axe'
import { chromiumAvailable, errorsOf, openApp, screenshot } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { expectFocus, switchView, tabTo, typeOver } from './support/keyboard'

const URL_FIELD = '#team-vault-url'
const KEY_FIELD = '#team-vault-key'
const CA_FIELD = '#team-vault-ca'
const CA_LABEL = 'CA certificate (PEM, optional)'
const CARD = { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 }, metadata: { team: 'yes' } }

describe.skipIf(!chromiumAvailable)('the window on a team vault', () => {
  const app = useDesktopApp()
  const page = () => app.page
  const cleanup: (() => Promise<unknown>)[] = []
  let server: Served
  let managementKey: string
  const indicator = (on: Page = page()) => on.getByTestId('vault-indicator')
  const notifications = async () => (await page().locator('.n-notification').allTextContents()).join('\n')

  beforeAll(async () => {
    const database = await createTestDatabase()
    cleanup.push(database.drop)
    const dir = await mkdtemp(join(tmpdir(), 'tessera-team-e2e-'))
    cleanup.push(() => rm(dir, { recursive: true, force: true }))
    const init = await run(['init', '--data-dir', dir, '--database-url', database.url, '--tenant-name', 'Team Acme', '--json'])
    managementKey = (JSON.parse(init.stdout) as { application: { key: string } }).application.key
    server = await serve(dir, { TESSERA_DATABASE_URL: database.url, TESSERA_LOG_LEVEL: 'warn' })
    cleanup.unshift(() => terminate(server))
  }, 60_000)

  afterAll(async () => {
    for (const step of cleanup) await step()
  })

  /** Fills the connection form and submits it, by keyboard, starting from the Settings heading. */
  async function connectByKeyboard(url: string, key: string): Promise<void> {
    await switchView(page(), 7, 'Settings')
    await tabTo(page(), URL_FIELD)
    await page().keyboard.press('Control+A')
    await page().keyboard.type(url)
    await tabTo(page(), KEY_FIELD)
    await page().keyboard.press('Control+A')
    await page().keyboard.type(key)
    await page().keyboard.press('Enter')
  }

  it('shows the embedded vault, and names the key when the team vault refuses it', async () => {
    await expect.poll(() => indicator().textContent()).toContain('Embedded vault')
    await connectByKeyboard(server.url, 'key_management_wrong')
    await expect.poll(() => notifications()).toContain('key: was refused by the team vault')
    expect(await indicator().textContent()).toContain('Embedded vault')
    expect(await axeViolations(page())).toEqual([])
  })

  it('offers a CA certificate field, labelled and described, and names it when what it holds is not a certificate', async () => {
    const field = page().getByRole('textbox', { name: CA_LABEL })
    expect(await field.count()).toBe(1)
    const hintId = await field.getAttribute('aria-describedby')
    expect(await page().locator(`#${hintId}`).textContent()).toMatch(/own certificate authority: paste that CA's certificate/)
    // By keyboard: Enter in the field starts a new line, as PEM has many; Connect is reached with Tab.
    await switchView(page(), 7, 'Settings')
    await tabTo(page(), URL_FIELD)
    await typeOver(page(), 'https://tessera.invalid')
    await tabTo(page(), KEY_FIELD)
    await typeOver(page(), managementKey)
    await tabTo(page(), CA_FIELD)
    await page().keyboard.type('not a certificate')
    await page().keyboard.press('Enter')
    await page().keyboard.type('at all')
    expect(await field.inputValue()).toBe('not a certificate\nat all')
    await tabTo(page(), '[data-test=team-vault-connect]')
    await page().keyboard.press('Enter')
    await expect.poll(() => notifications()).toContain('caCertificate: holds no PEM certificate')
    expect(await indicator().textContent()).toContain('Embedded vault')
    expect({ violations: await axeViolations(page()), unlabelled: await fieldsWithoutLabel(page()) }).toEqual({ violations: [], unlabelled: [] })
    await page().getByTestId('team-vault-card').scrollIntoViewIfNeeded()
    await screenshot(page(), 'team-vault-form', 'light')

    const dark = await openApp(app.browser, app.harness, 'dark', '/settings')
    await dark.locator(CA_FIELD).waitFor()
    await dark.getByTestId('team-vault-card').scrollIntoViewIfNeeded()
    await screenshot(dark, 'team-vault-form', 'dark')
    expect({ violations: await axeViolations(dark), unlabelled: await fieldsWithoutLabel(dark) }).toEqual({ violations: [], unlabelled: [] })
    expect(errorsOf(dark)).toEqual([])
    await dark.context().close()

    // Emptied again, so that the next connection trusts the public CAs (the test server speaks plain http to this computer).
    await tabTo(page(), CA_FIELD, { backwards: true })
    await page().keyboard.press('Control+A')
    await page().keyboard.press('Delete')
    expect(await field.inputValue()).toBe('')
  })

  it('connects by keyboard: the sidebar names the team vault, focus goes to Disconnect, the key leaves the form', async () => {
    await connectByKeyboard(server.url, managementKey)
    const host = new URL(server.url).host
    await expect.poll(() => indicator().textContent()).toContain(`Team vault · ${host}`)
    expect(await indicator().textContent()).toContain('Team Acme')
    await expectFocus(page(), '[data-test=team-vault-disconnect]')
    expect(await page().content()).not.toContain(managementKey)
    // The embedded vault's cards and its Lock button are not offered on a team vault.
    expect(await page().getByTestId('service-card').count()).toBe(0)
    expect(await page().getByTestId('lock').count()).toBe(0)
    await screenshot(page(), 'team-vault-settings', 'light')
  })

  it("shows the team server's tokens, without Reveal, and passes axe in both themes", async () => {
    const created = await fetch(`${app.harness.url}__ipc/app:tokens.create`, { method: 'POST', body: JSON.stringify([CARD]) }).then((r) => r.json())
    expect(created).toMatchObject({ ok: true, value: { type: 'card' } })
    await page().keyboard.press('Alt+1')
    await page().getByTestId('token-row').first().waitFor()
    expect(await page().getByTestId('token-row').count()).toBe(1)
    expect(await axeViolations(page())).toEqual([])
    await page().getByTestId('token-row').first().click()
    await page().getByTestId('edit-token').waitFor()
    expect(await page().getByTestId('reveal').count()).toBe(0)
    await page().keyboard.press('Escape')

    const dark = await openApp(app.browser, app.harness, 'dark', '/settings')
    await expect.poll(() => indicator(dark).textContent()).toContain('Team vault')
    await dark.getByTestId('team-vault-disconnect').waitFor()
    expect(await axeViolations(dark)).toEqual([])
    await screenshot(dark, 'team-vault-settings', 'dark')
    expect(errorsOf(dark)).toEqual([])
    await dark.context().close()
  })

  it('disconnects by keyboard: back on the embedded vault, focus in the URL field', async () => {
    await switchView(page(), 7, 'Settings')
    await tabTo(page(), '[data-test=team-vault-disconnect]')
    await page().keyboard.press('Enter')
    await expect.poll(() => indicator().textContent()).toContain('Embedded vault')
    await expectFocus(page(), URL_FIELD)
    expect(await page().locator(KEY_FIELD).inputValue()).toBe('')
    expect(errorsOf(page())).toEqual([])
  })
})
