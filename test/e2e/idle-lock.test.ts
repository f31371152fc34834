/**
 * The idle lock in the window, by keyboard: Settings changes the minutes
 * (refusing a bad value beside the field), the last minute shows a countdown
 * with "Stay unlocked", and the lock screen follows the lock. The test reports
 * the system's idle time as Electron's powerMonitor does in the app.
 */
import { describe, expect, it } from 'vitest'
import { listLogsQuery } from '../../src/shared/contracts'
import { parse } from '../../src/main/app'
import { chromiumAvailable, errorsOf, navigate } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { expectFocus, tabTo } from './support/keyboard'

describe.skipIf(!chromiumAvailable)('The idle lock in the window', () => {
  const app = useDesktopApp()
  const desktop = () => app.harness.desktop
  const vaultMessages = async () =>
    (await desktop().requireVault().services.logs.list(desktop().actor(), parse(listLogsQuery, { entity_type: 'vault', size: 2 }))).data.map((entry) => entry.message)

  it('changes the idle minutes in Settings, saying what is wrong with a bad value', async () => {
    await app.page.keyboard.press('Alt+7')
    await expectFocus(app.page, 'main h1')
    await tabTo(app.page, '#idle-lock-minutes')
    // The field can take focus before the stored settings have been read into it.
    await expect.poll(() => app.page.inputValue('#idle-lock-minutes')).toBe('15')
    await app.page.keyboard.press('ControlOrMeta+A')
    await app.page.keyboard.type('0')
    await app.page.getByText('Enter whole minutes from 1 to 480.').waitFor()
    expect(await app.page.getByTestId('save-idle-lock').isDisabled()).toBe(true)

    await app.page.keyboard.press('ControlOrMeta+A')
    await app.page.keyboard.type('5')
    await app.page.keyboard.press('Enter')
    await expect.poll(() => desktop().settings.idleLockMinutes).toBe(5)
    // Saving restarts the service; the status answers once it is back.
    expect((await desktop().status()).state).toBe('unlocked')
    await expect.poll(() => app.page.getByText('Enter whole minutes from 1 to 480.').count()).toBe(0)
    await expectFocus(app.page, '#idle-lock-minutes')
  })

  it('shows the lock screen, focus on Unlock, when the vault locks after the idle minutes, and logs why', async () => {
    await desktop().reportIdle(5 * 60 - 30)
    await app.page.getByTestId('idle-warning').waitFor({ timeout: 8000 })
    await desktop().reportIdle(5 * 60)
    await app.page.getByTestId('locked').waitFor({ timeout: 5000 })
    await expectFocus(app.page, '[data-test=unlock]')

    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('service-url').waitFor()
    expect(await vaultMessages()).toEqual(['Vault unlocked in the desktop app', 'Vault locked after 5 minutes idle'])
  })

  it('counts down the last minute; "Stay unlocked" by keyboard keeps the vault open', async () => {
    await desktop().reportIdle(5 * 60 - 40)
    const countdown = app.page.getByTestId('idle-countdown')
    await countdown.waitFor({ timeout: 8000 })
    expect(await countdown.textContent()).toMatch(/^The vault locks in (40|3\d) s — move the mouse or press a key to stay unlocked\.$/)

    await tabTo(app.page, '[data-test=stay-unlocked]', { backwards: true })
    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('idle-warning').waitFor({ state: 'detached' })
    // Back where the user was when the warning appeared: the view's heading, where unlocking put it.
    await expectFocus(app.page, 'main h1')
    expect((await desktop().status()).state).toBe('unlocked')
    expect(Date.parse((await desktop().status()).idleLock!.lockAt!) - Date.now()).toBeGreaterThan(4 * 60_000)
    expect(errorsOf(app.page)).toEqual([])
  })

  it('forgets what the window read once the vault locks: a revealed plaintext and a bulk tokenize\'s file are gone after unlocking', async () => {
    const page = app.page
    const number = '4242424242424242'
    const { token } = await desktop().requireVault().services.tokens.create(desktop().actor(), { type: 'card', data: { number, expiration_month: 12, expiration_year: 2030 } })
    await navigate(page, 'Bulk tokenize')
    await page.getByTestId('csv-upload').locator('input[type=file]').setInputFiles({ name: 'cards.csv', mimeType: 'text/csv', buffer: Buffer.from(`card_number\n${number}\n`) })
    await page.getByTestId('run').waitFor()
    await navigate(page, 'Tokens')
    await page.getByTestId('token-row').filter({ hasText: token.id }).click()
    const detail = page.getByTestId('token-detail')
    await detail.getByTestId('reveal').click()
    await page.getByTestId('reveal-reason').locator('input').fill('Lock check')
    await page.getByTestId('reveal-confirm').click()
    await expect.poll(() => detail.getByTestId('revealed-data').textContent()).toContain(number)

    // As the idle lock does, with the plaintext on screen and its 30 seconds not over.
    await desktop().lock()
    await page.getByTestId('unlock').click()
    await page.getByTestId('token-row').filter({ hasText: token.id }).waitFor()
    expect(await detail.count()).toBe(0)
    expect(await page.content()).not.toContain(number)
    await navigate(page, 'Bulk tokenize')
    await page.getByTestId('csv-upload').waitFor()
    expect(await page.getByTestId('run').count()).toBe(0)
    expect(await page.content()).not.toContain(number)
    expect(errorsOf(page)).toEqual([])
  })

  it('leaves nothing of the vault in the window once locked, not even the views it keeps for a return or their menus', async () => {
    const page = app.page
    const { token } = await desktop().requireVault().services.tokens.create(desktop().actor(), { type: 'token', data: 'kept-view check', metadata: { note: 'kept-view-marker' } })
    await navigate(page, 'Tokens')
    await page.getByTestId('token-row').filter({ hasText: token.id }).waitFor()
    await page.getByTestId('filter-type').click()
    await page.locator('.n-base-select-menu').waitFor()
    await page.keyboard.press('Escape')
    await page.locator('.n-base-select-menu').waitFor({ state: 'detached' })
    await navigate(page, 'Audit logs')
    await page.getByTestId('log-row').filter({ hasText: token.id }).first().waitFor()
    await page.getByTestId('filter-entity-type').click()
    await page.locator('.n-base-select-menu').waitFor()
    await page.keyboard.press('Escape')
    await page.locator('.n-base-select-menu').waitFor({ state: 'detached' })
    await navigate(page, 'Settings')
    await page.getByTestId('settings-lock').waitFor()

    await page.getByTestId('lock').click()
    await page.getByTestId('locked').waitFor()
    const html = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { outerHTML: string } } }).document.documentElement.outerHTML)
    expect(html).not.toContain(token.id)
    expect(html).not.toContain('kept-view-marker')
    expect(await page.locator('.n-data-table, .n-base-select-menu').count()).toBe(0)

    await page.getByTestId('unlock').click()
    await page.getByTestId('service-url').waitFor()
  })
})
