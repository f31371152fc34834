/**
 * Settings by keyboard alone: each change saved (in the vault's settings) and
 * shown (in the view when the user comes back to it), and where focus lands.
 */
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf, expectNotification } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { describeFocus, DIALOG_CONFIRM, expectFocus, switchView, tabTo, typeOver } from './support/keyboard'
import { seedVault } from './support/seed'
import { freePort } from '../helpers/desktop'

const PUBLIC_BASE_URL = 'input[placeholder="https://vault.example.com"]'
const SMTP_HOST = 'input[placeholder="smtp.example.com"]'
const SMTP_FROM = 'input[placeholder="Tessera <vault@example.com>"]'
const IDLE_LOCK_MINUTES = '#idle-lock-minutes'
const PORT = '[data-test=port] input'

describe.skipIf(!chromiumAvailable)('Settings by keyboard', () => {
  const app = useDesktopApp({ prepare: seedVault })
  const page = () => app.page
  const saved = () => app.harness.desktop.settings.view()
  const theme = () => page().locator('html').getAttribute('data-theme')

  /** Leaves Settings and comes back with Alt+N, so the view shows what was saved rather than what was typed. */
  async function reopenSettings(): Promise<void> {
    await switchView(page(), 1, 'Tokens')
    await switchView(page(), 7, 'Settings')
  }

  /**
   * Holds the next settings read (the one Settings makes on opening) until
   * `release`: `requested` settles once the window has asked for it.
   */
  async function holdNextSettingsRead(): Promise<{ requested: Promise<void>; release: () => void }> {
    let release!: () => void
    let requested!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const asked = new Promise<void>((resolve) => (requested = resolve))
    await page().route(
      '**/__ipc/app:settings.get',
      async (route) => {
        requested()
        await released
        await route.continue()
      },
      { times: 1 }
    )
    return { requested: asked, release }
  }

  it('saves the public base URL; focus stays on the save button', async () => {
    await page().getByTestId('token-row').first().waitFor()
    // Until the stored settings are read there is no port to restart on: saving waits for them.
    const read = await holdNextSettingsRead()
    await switchView(page(), 7, 'Settings')
    await read.requested
    expect(await page().getByTestId('save-service').isDisabled()).toBe(true)
    read.release()
    await expect.poll(() => page().getByTestId('save-service').isDisabled()).toBe(false)
    await tabTo(page(), PUBLIC_BASE_URL)
    await page().keyboard.type('https://vault.example.com')
    await tabTo(page(), '[data-test=save-service]')
    await page().keyboard.press('Enter')
    await expectNotification(page(), 'Service settings saved')
    expect(saved().publicBaseUrl).toBe('https://vault.example.com')
    await expectFocus(page(), '[data-test=save-service]')

    await reopenSettings()
    expect(await page().locator(PUBLIC_BASE_URL).inputValue()).toBe('https://vault.example.com')
  })

  it('saves an SMTP server; focus stays on its Save button', async () => {
    await tabTo(page(), SMTP_HOST)
    await page().keyboard.type('smtp.example.com')
    await tabTo(page(), SMTP_FROM)
    await page().keyboard.type('Tessera <vault@example.com>')
    await tabTo(page(), '[data-test=smtp-card] button[type=submit]')
    await page().keyboard.press('Enter')
    await expectNotification(page(), 'SMTP settings saved')
    expect(saved().smtp).toMatchObject({ host: 'smtp.example.com', from: 'Tessera <vault@example.com>' })
    await expectFocus(page(), '[data-test=smtp-card] button[type=submit]')

    await reopenSettings()
    expect(await page().locator(SMTP_HOST).inputValue()).toBe('smtp.example.com')
    expect(await page().getByTestId('smtp-card').textContent()).not.toContain('Not configured')
  })

  it('shows and hides the SMTP password with its eye, a button pressed with Enter', async () => {
    const password = page().locator('[data-test=smtp-password] input')
    await tabTo(page(), '[data-test=smtp-password] input', { backwards: true })
    await page().keyboard.type('s3cret')
    await page().keyboard.press('Tab')
    await expectFocus(page(), '[data-test=smtp-password] [role=button][aria-label="Show password"][aria-pressed=false]')
    await page().keyboard.press('Enter')
    await expect.poll(() => password.getAttribute('type')).toBe('text')
    await expectFocus(page(), '[data-test=smtp-password] [role=button][aria-label="Hide password"][aria-pressed=true]')
    await page().keyboard.press('Enter')
    await expect.poll(() => password.getAttribute('type')).toBe('password')
    await expectFocus(page(), '[data-test=smtp-password] [aria-label="Show password"]')
  })

  it('switches the theme with the arrow keys in its radio group; focus follows the choice', async () => {
    await tabTo(page(), '[data-test=theme-preference] input:checked')
    expect(await describeFocus(page())).toContain('[data-test=theme-preference]')
    await page().keyboard.press('ArrowRight')
    await page().keyboard.press('ArrowRight')
    await expectFocus(page(), '[data-test=theme-preference] input[value=dark]:checked')
    await expect.poll(() => theme()).toBe('dark')

    await page().keyboard.press('ArrowLeft')
    await expectFocus(page(), '[data-test=theme-preference] input[value=light]:checked')
    await expect.poll(() => theme()).toBe('light')
    await reopenSettings()
    expect(await page().locator('[data-test=theme-preference] input[value=light]').isChecked()).toBe(true)
  })

  it('saves the idle lock minutes; a value out of range is refused beside the field', async () => {
    await tabTo(page(), IDLE_LOCK_MINUTES)
    await typeOver(page(), '0')
    await expect.poll(() => page().getByTestId('idle-lock-form').textContent()).toContain('Enter whole minutes from 1 to 480.')
    expect(await page().getByTestId('save-idle-lock').isDisabled()).toBe(true)

    await typeOver(page(), '25')
    await expect.poll(() => page().getByTestId('idle-lock-form').textContent()).not.toContain('Enter whole minutes')
    await tabTo(page(), '[data-test=save-idle-lock]')
    await page().keyboard.press('Enter')
    await expectNotification(page(), 'The vault now locks after 25 minutes idle')
    expect(saved().idleLockMinutes).toBe(25)

    await reopenSettings()
    expect(await page().locator(IDLE_LOCK_MINUTES).inputValue()).toBe('25')
  })

  it('keeps what is typed while the settings are read again: Ctrl+A and typing replace the value', async () => {
    const read = await holdNextSettingsRead()
    await reopenSettings()
    await read.requested
    await tabTo(page(), IDLE_LOCK_MINUTES)
    await typeOver(page(), '4')
    // The read lands between two key presses, bringing a setting changed meanwhile: the untouched field shows it.
    await app.harness.desktop.updateSettings({ publicBaseUrl: 'https://other.example.com' })
    read.release()
    await expect.poll(() => page().locator(PUBLIC_BASE_URL).inputValue()).toBe('https://other.example.com')
    await page().keyboard.type('5')
    expect(await page().locator(IDLE_LOCK_MINUTES).inputValue()).toBe('45')
    await expectFocus(page(), IDLE_LOCK_MINUTES)
    await reopenSettings()
    expect(await page().locator(IDLE_LOCK_MINUTES).inputValue()).toBe('25')
  })

  it('moves the REST service to another port; the service answers there', async () => {
    const port = await freePort()
    await tabTo(page(), PORT)
    await typeOver(page(), String(port))
    await tabTo(page(), '[data-test=save-service]')
    await page().keyboard.press('Enter')
    // Shown once the service has restarted on the new port, which may take seconds on a busy machine.
    await page().locator('[data-test=settings-service-url]', { hasText: `:${port}` }).waitFor()
    expect(await page().getByTestId('settings-service-url').textContent()).toBe(`http://127.0.0.1:${port}`)
    expect(await app.harness.serviceUrl()).toBe(`http://127.0.0.1:${port}`)
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBeLessThan(500)
    await expectFocus(page(), '[data-test=save-service]')
  })

  it('refuses an empty port beside the field, with Save off until there is one', async () => {
    const form = () => page().getByTestId('service-card').textContent()
    await tabTo(page(), PORT, { backwards: true })
    const stored = await page().locator(PORT).inputValue()
    await page().keyboard.press('Control+A')
    await page().keyboard.press('Backspace')
    await expect.poll(form).toContain('Enter a port from 1 to 65535.')
    expect(await page().getByTestId('save-service').isDisabled()).toBe(true)

    await page().keyboard.type(stored)
    await expect.poll(form).not.toContain('Enter a port')
    expect(await page().getByTestId('save-service').isDisabled()).toBe(false)
  })

  it('locks the vault from Settings after confirming, and unlocks it again', async () => {
    await tabTo(page(), '[data-test=settings-lock]')
    await page().keyboard.press('Enter')
    await page().locator('.n-dialog').waitFor()
    await tabTo(page(), DIALOG_CONFIRM)
    await page().keyboard.press('Enter')
    await page().getByTestId('locked').waitFor()
    expect((await app.harness.desktop.status()).state).toBe('locked')
    await expectFocus(page(), '[data-test=unlock]')

    await page().keyboard.press('Enter')
    await page().getByTestId('service-url').waitFor()
    expect((await app.harness.desktop.status()).state).toBe('unlocked')
    await expectFocus(page(), 'main h1')
    expect(errorsOf(page())).toEqual([])
  })
})
