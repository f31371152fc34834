/**
 * The shell by keyboard alone: the skip link, switching views with Alt+N (focus
 * on the view's heading, the view in the window title, nothing while a dialog
 * is open), and locking and unlocking.
 */
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { describeFocus, expectFocus, focusedText, tabTo } from './support/keyboard'
import { seedVault } from './support/seed'

describe.skipIf(!chromiumAvailable)('The shell by keyboard', () => {
  const app = useDesktopApp({ prepare: seedVault })

  it('offers "Skip to content" first, which moves focus past the sidebar to the view', async () => {
    await app.page.getByTestId('token-row').first().waitFor()
    await app.page.keyboard.press('Tab')
    expect(await describeFocus(app.page)).toBe('a[data-test=skip-link] "Skip to content"')
    expect(await app.page.getByTestId('skip-link').isVisible()).toBe(true)
    await app.page.keyboard.press('Enter')
    await expectFocus(app.page, 'main h1')
    expect(await focusedText(app.page)).toBe('Tokens')
    // The next Tab goes on into the view, not back to the sidebar.
    await app.page.keyboard.press('Tab')
    expect(await describeFocus(app.page)).toMatch(/"Refresh"/)
  })

  it.each([
    ['1', 'Tokens'],
    ['2', 'Bulk tokenize'],
    ['3', 'Audit logs'],
    ['4', 'Applications'],
    ['5', 'Sessions'],
    ['6', 'Members'],
    ['7', 'Settings'],
    ['8', 'Webhooks']
  ])('Alt+%s shows %s with focus on its heading and its name in the window title', async (key, title) => {
    await app.page.keyboard.press(`Alt+${key}`)
    // Focus moves once the view is drawn; until then it stays on the previous view's heading.
    await expect.poll(() => focusedText(app.page), { timeout: 10_000 }).toBe(title)
    await expectFocus(app.page, 'main h1')
    expect(await app.page.title()).toBe(`${title} — Tessera`)
  })

  it('ignores Alt+N while a dialog is open, so a form is not dropped', async () => {
    await app.page.keyboard.press('Alt+1')
    await expectFocus(app.page, 'main h1')
    await tabTo(app.page, '[data-test=new-token]')
    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('token-form').waitFor()
    await app.page.keyboard.press('Alt+3')
    await app.page.waitForTimeout(300)
    expect(await app.page.getByTestId('token-form').isVisible()).toBe(true)
    expect(await app.page.title()).toBe('Tokens — Tessera')
    await app.page.keyboard.press('Escape')
    await app.page.getByTestId('token-form').waitFor({ state: 'detached' })
    await expectFocus(app.page, '[data-test=new-token]')
  })

  it('locks and unlocks: the lock screen puts focus on Unlock, the view on its heading', async () => {
    await tabTo(app.page, '[data-test=lock]', { backwards: true })
    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('locked').waitFor()
    await expectFocus(app.page, '[data-test=unlock]')
    expect((await app.harness.desktop.status()).state).toBe('locked')
    expect(await app.page.title()).toBe('Tessera')

    await app.page.keyboard.press('Enter')
    await app.page.getByTestId('service-url').waitFor()
    expect((await app.harness.desktop.status()).state).toBe('unlocked')
    await expectFocus(app.page, 'main h1')
    expect(errorsOf(app.page)).toEqual([])
  })
})
