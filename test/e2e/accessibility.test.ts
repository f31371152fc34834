import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { axeViolations, fieldsWithoutLabel } from './support/axe'
import { chromiumAvailable, errorsOf, navigate, openApp } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { startDesktopHarness, type DesktopHarness } from './support/desktop-harness'
import { focusRing, nextFrame, settled, transitionsDone } from './support/in-page'
import { seedVault } from './support/seed'

const THEMES = ['light', 'dark'] as const

/** Nothing loads, spins or pops up, and the last frame is painted. */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle')
  await page.waitForFunction(settled)
  await page.evaluate(nextFrame)
}

/**
 * What is on screen, once faded in, has no WCAG 2.1 A/AA violation and no
 * field named only by its placeholder.
 */
async function expectAccessible(page: Page): Promise<void> {
  await page.waitForFunction(transitionsDone)
  expect({ violations: await axeViolations(page), unlabelled: await fieldsWithoutLabel(page) }).toEqual({ violations: [], unlabelled: [] })
}

const dialog = (page: Page) => page.locator('.n-dialog')
const selectMenu = (page: Page) => page.locator('.n-base-select-menu')

const firstRow = (page: Page, table: string) => page.getByTestId(table).locator('.n-data-table-tbody .n-data-table-tr').first().waitFor()
const openTab = (page: Page, title: string) => page.locator('.n-tabs-tab', { hasText: title }).click()

interface ViewCheck {
  name: string
  /** The sidebar link. */
  view: string
  /** Waits for the view's data (and opens a tab). */
  ready: (page: Page) => Promise<unknown>
}

/** One control of each kind, by view: the focus ring must show on each. */
const FOCUSABLE: { view: string; control: (page: Page) => ReturnType<Page['locator']> }[] = [
  { view: 'Tokens', control: (page) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tokens' }) },
  { view: 'Tokens', control: (page) => page.getByTestId('new-token') },
  { view: 'Tokens', control: (page) => page.getByRole('button', { name: 'Refresh' }) },
  { view: 'Tokens', control: (page) => page.getByTestId('theme-toggle') },
  { view: 'Tokens', control: (page) => page.getByTestId('filter-id').locator('textarea') },
  { view: 'Tokens', control: (page) => page.getByTestId('filter-type').locator('[tabindex="0"]').first() },
  { view: 'Tokens', control: (page) => page.getByTestId('token-row').first() },
  { view: 'Audit logs', control: (page) => page.getByTestId('filter-entity-type').locator('[tabindex="0"]').first() },
  { view: 'Audit logs', control: (page) => page.getByTestId('filter-dates').locator('input').first() },
  { view: 'Applications', control: (page) => page.getByTestId('regenerate').first() },
  { view: 'Webhooks', control: (page) => page.getByTestId('new-webhook') },
  { view: 'Settings', control: (page) => page.getByTestId('theme-preference').locator('input').first() },
  { view: 'Settings', control: (page) => page.getByTestId('smtp-require-tls') },
  { view: 'Settings', control: (page) => page.getByTestId('port').locator('input') },
  { view: 'Settings', control: (page) => page.getByTestId('settings-lock') }
]

const VIEWS: ViewCheck[] = [
  { name: 'tokens', view: 'Tokens', ready: (page) => firstRow(page, 'tokens-table') },
  { name: 'tokenize', view: 'Bulk tokenize', ready: (page) => page.getByTestId('csv-upload').waitFor() },
  { name: 'audit logs', view: 'Audit logs', ready: (page) => firstRow(page, 'logs-table') },
  { name: 'applications', view: 'Applications', ready: (page) => firstRow(page, 'applications-table') },
  { name: 'sessions', view: 'Sessions', ready: (page) => page.getByTestId('sessions-table').waitFor() },
  { name: 'members', view: 'Members', ready: (page) => firstRow(page, 'members-table') },
  { name: 'invitations', view: 'Members', ready: async (page) => (await openTab(page, 'Invitations'), firstRow(page, 'invitations-table')) },
  { name: 'outbox', view: 'Members', ready: async (page) => (await openTab(page, 'Outbox'), firstRow(page, 'outbox-table')) },
  { name: 'settings', view: 'Settings', ready: (page) => page.getByTestId('keys-card').locator('tbody tr').first().waitFor() },
  { name: 'webhooks', view: 'Webhooks', ready: (page) => page.getByTestId('webhooks-table').waitFor() }
]

describe.skipIf(!chromiumAvailable)('accessibility: WCAG 2.1 A and AA (axe-core) in both themes', () => {
  const app = useDesktopApp({ prepare: seedVault })
  let setupHarness: DesktopHarness

  beforeAll(async () => {
    setupHarness = await startDesktopHarness({ vault: 'none' })
  })

  afterAll(async () => {
    await setupHarness?.stop()
  })

  for (const theme of THEMES) {
    describe(`${theme} theme`, () => {
      beforeAll(async () => {
        await app.page.emulateMedia({ colorScheme: theme })
        await app.page.waitForFunction((name) => (globalThis as unknown as { document: { documentElement: { dataset: { theme?: string } } } }).document.documentElement.dataset.theme === name, theme)
      })

      // A failed check may leave its dialog open: close what Escape closes, so the next check starts clean.
      afterEach(async () => {
        for (let i = 0; i < 3 && (await app.page.locator('.n-modal-container .n-modal, .n-drawer, .n-dialog').count()) > 0; i++) {
          await app.page.keyboard.press('Escape')
          await app.page.waitForTimeout(300)
        }
      })

      for (const check of VIEWS) {
        it(`has no violation on the ${check.name} view`, async () => {
          await navigate(app.page, check.view)
          await check.ready(app.page)
          await settle(app.page)
          await expectAccessible(app.page)
        })
      }

      it('has none in the new-token modal, its type menu and its containers field', async () => {
        const page = app.page
        await navigate(page, 'Tokens')
        await page.getByTestId('new-token').click()
        const form = page.getByTestId('token-form')
        await form.waitFor()
        await expectAccessible(page)
        await form.getByTestId('token-type').click()
        await selectMenu(page).waitFor()
        await expectAccessible(page)
        await page.keyboard.press('Escape')
        await form.getByRole('button', { name: 'Add container' }).click()
        await form.getByRole('button', { name: 'Add metadata' }).click()
        await expectAccessible(page)
        await form.getByRole('button', { name: 'Cancel' }).click()
        await form.waitFor({ state: 'detached' })
      })

      it('has none in the token drawer, the reveal dialog, the revealed value, the edit modal and the delete confirmation', async () => {
        const page = app.page
        await page.getByTestId('token-row').first().click()
        const detail = page.getByTestId('token-detail')
        await detail.waitFor()
        await expectAccessible(page)
        await detail.getByTestId('reveal').click()
        await page.getByTestId('reveal-dialog').waitFor()
        await expectAccessible(page)
        await page.getByTestId('reveal-reason').locator('input').fill(`Accessibility check, ${theme}`)
        await page.getByTestId('reveal-confirm').click()
        await detail.getByTestId('revealed').waitFor()
        await expectAccessible(page)
        await detail.getByRole('button', { name: 'Hide' }).click()
        await detail.getByTestId('delete-token').click()
        await dialog(page).waitFor()
        await expectAccessible(page)
        await dialog(page).getByRole('button', { name: 'Cancel' }).click()
        await dialog(page).waitFor({ state: 'detached' })
        await detail.getByTestId('edit-token').click()
        await page.getByTestId('token-form').waitFor()
        await expectAccessible(page)
        await page.getByTestId('token-form').getByRole('button', { name: 'Cancel' }).click()
        await page.keyboard.press('Escape')
        await detail.waitFor({ state: 'detached' })
      })

      it('has none in bulk tokenization: columns, preview, progress and result', async () => {
        const page = app.page
        await navigate(page, 'Bulk tokenize')
        await openTab(page, 'Paste JSON')
        await page.getByTestId('json-input').locator('textarea').fill(JSON.stringify([{ customer: `cus_${theme}`, card_number: '4242424242424242' }]))
        await page.getByTestId('json-load').click()
        await page.getByTestId('run').waitFor()
        await expectAccessible(page)
        await page.getByTestId('run').click()
        await page.getByTestId('result').waitFor()
        await expectAccessible(page)
        await page.getByRole('button', { name: 'Start over' }).click()
      })

      it('has none in the metadata filter popover', async () => {
        await navigate(app.page, 'Tokens')
        const page = app.page
        await page.getByTestId('filter-metadata').click()
        await page.getByRole('button', { name: 'Add metadata filter' }).click()
        await expectAccessible(page)
        await page.getByTestId('filter-metadata').click()
      })

      it('has none in the audit log filter menu and date picker', async () => {
        const page = app.page
        await navigate(page, 'Audit logs')
        await page.getByTestId('filter-entity-type').click()
        await selectMenu(page).waitFor()
        await expectAccessible(page)
        await page.keyboard.press('Escape')
        await page.getByTestId('filter-dates').click()
        await page.locator('.n-date-panel').waitFor()
        await expectAccessible(page)
        await page.keyboard.press('Escape')
      })

      it('has none in an audit entry opened in full', async () => {
        const page = app.page
        await navigate(page, 'Audit logs')
        await page.getByTestId('log-row').first().click()
        await page.getByTestId('log-entry-detail').waitFor()
        await expectAccessible(page)
        await page.keyboard.press('Escape')
        await page.getByTestId('log-entry-detail').waitFor({ state: 'hidden' })
      })

      it('has none in the application form, the key shown once and the regenerate confirmation', async () => {
        const page = app.page
        await navigate(page, 'Applications')
        await page.getByTestId('new-application').click()
        const form = page.getByTestId('application-form')
        await form.waitFor()
        await form.getByTestId('application-name').locator('input').fill(`Accessibility check ${theme}`)
        await form.getByRole('button', { name: 'Add rule' }).click()
        await expectAccessible(page)
        await form.getByRole('button', { name: 'Remove rule 1' }).click()
        await form.getByTestId('permissions-picker').getByText('read', { exact: true }).click()
        await form.getByTestId('application-submit').click()
        const key = page.getByTestId('key-once')
        await key.waitFor()
        await expectAccessible(page)
        await key.getByRole('button', { name: 'I have stored the key' }).click()
        await key.waitFor({ state: 'hidden' })
        await page.getByTestId('regenerate').first().click()
        await dialog(page).waitFor()
        await expectAccessible(page)
        await dialog(page).getByRole('button', { name: 'Cancel' }).click()
        await dialog(page).waitFor({ state: 'detached' })
      })

      it('has none while creating and authorizing a session, in its menus and the revoke confirmation', async () => {
        const page = app.page
        await navigate(page, 'Sessions')
        await page.getByTestId('public-application').click()
        await selectMenu(page).waitFor()
        await expectAccessible(page)
        await selectMenu(page).getByText('Payment form', { exact: true }).click()
        await page.getByTestId('create-session').click()
        const table = page.getByTestId('sessions-table')
        await table.getByText('not authorized').first().waitFor()
        await page.getByTestId('private-application').click()
        await selectMenu(page).getByText('Checkout backend', { exact: true }).click()
        await page.getByTestId('permissions-picker').getByText('read', { exact: true }).click()
        await page.getByRole('button', { name: 'Add rule' }).click()
        await page.getByRole('button', { name: 'Add condition' }).click()
        await expectAccessible(page)
        await page.getByRole('button', { name: 'Remove rule 1' }).click()
        await page.getByTestId('authorize-session').click()
        await table.getByText('authorized by Checkout backend').first().waitFor()
        await settle(page)
        await expectAccessible(page)
        await table.getByTestId('revoke-session').first().click()
        await dialog(page).waitFor()
        await expectAccessible(page)
        await dialog(page).getByRole('button', { name: 'Cancel' }).click()
        await dialog(page).waitFor({ state: 'detached' })
      })

      it('has none in the invite form and the notification that follows', async () => {
        const page = app.page
        await navigate(page, 'Members')
        await page.getByTestId('invite').click()
        await page.getByTestId('invite-form').waitFor()
        await expectAccessible(page)
        await page.getByTestId('invite-email').locator('input').fill(`${theme}@example.com`)
        await page.getByTestId('invite-submit').click()
        await page.locator('.n-notification').getByText('Invitation created').waitFor()
        await expectAccessible(page)
      })

      it('has none in the webhook form with a refused field, the webhooks table, the delivery log and its status menu, and the delete confirmation', async () => {
        const page = app.page
        await navigate(page, 'Webhooks')
        await page.getByTestId('new-webhook').click()
        const form = page.getByTestId('webhook-form')
        await form.getByTestId('webhook-name').locator('input').fill(`Receiver ${theme}`)
        await form.getByTestId('webhook-url').locator('input').fill('ftp://127.0.0.1/events')
        await form.getByText('token.created', { exact: true }).click()
        await form.getByTestId('webhook-submit').click()
        await form.getByText('must be an http or https URL').waitFor()
        await expectAccessible(page)
        // Port 9 (discard) refuses the connection: the delivery fails and waits for its next attempt.
        await form.getByTestId('webhook-url').locator('input').fill('http://127.0.0.1:9/events')
        await form.getByTestId('webhook-submit').click()
        await form.waitFor({ state: 'detached' })
        const row = page.getByTestId('webhooks-table').locator('tbody tr', { hasText: `Receiver ${theme}` })
        await row.waitFor()
        await app.harness.desktop.requireVault().services.tokens.create(app.harness.desktop.actor(), { type: 'token', data: `webhook check ${theme}` })
        await settle(page)
        await expectAccessible(page)
        await row.getByTestId('deliveries').click()
        const log = page.getByTestId('webhook-deliveries')
        await expect
          .poll(async () => (await log.getByTestId('refresh-deliveries').click(), log.getByTestId('deliveries-table').textContent()), { timeout: 10_000, interval: 500 })
          .toContain('ECONNREFUSED')
        await settle(page)
        await expectAccessible(page)
        await log.getByTestId('delivery-status').click()
        await selectMenu(page).waitFor()
        await expectAccessible(page)
        // Escape closes the menu first; the log stays open until Close.
        await page.keyboard.press('Escape')
        await selectMenu(page).waitFor({ state: 'hidden' })
        await log.getByTestId('close-deliveries').click()
        await log.waitFor({ state: 'detached' })
        await row.getByTestId('delete-webhook').click()
        await dialog(page).waitFor()
        await expectAccessible(page)
        await dialog(page).getByRole('button', { name: 'Cancel' }).click()
        await dialog(page).waitFor({ state: 'detached' })
      })

      it('has none in the confirmations of Settings and on the lock screen', async () => {
        const page = app.page
        await navigate(page, 'Settings')
        await page.getByTestId('rotate-data-key').click()
        await dialog(page).waitFor()
        await expectAccessible(page)
        await dialog(page).getByRole('button', { name: 'Cancel' }).click()
        await dialog(page).waitFor({ state: 'detached' })
        await page.getByTestId('settings-lock').click()
        await dialog(page).waitFor()
        await expectAccessible(page)
        await dialog(page).getByRole('button', { name: 'Lock', exact: true }).click()
        await page.getByTestId('locked').waitFor()
        await expectAccessible(page)
        await page.getByTestId('unlock').click()
        await page.getByTestId('service-url').waitFor()
      })

      it('has none on the first-run screen', async () => {
        const page = await openApp(app.browser, setupHarness, theme)
        try {
          await page.getByTestId('setup').waitFor()
          await expectAccessible(page)
        } finally {
          await page.context().close()
        }
      })

      it('rings every kind of control it focuses from the keyboard: 2px, 3:1 against the background', async () => {
        const page = app.page
        const rings = []
        for (const { view, control } of FOCUSABLE) {
          await navigate(page, view)
          const target = control(page)
          await target.waitFor()
          // A key press first: the browser then treats the focus as keyboard focus (:focus-visible).
          await page.keyboard.press('Shift')
          await target.focus()
          rings.push(await page.evaluate(focusRing))
        }
        for (const ring of rings) {
          expect(ring, ring.focused).toMatchObject({ focusVisible: true, style: 'solid', width: 2 })
          expect(ring.contrast, ring.focused).toBeGreaterThanOrEqual(3)
        }
      })

      it('throws no error on the way', () => {
        expect(errorsOf(app.page)).toEqual([])
      })
    })
  }

  describe('announcements for screen readers', () => {
    it('says once that plaintext is shown and once that it is hidden; the countdown itself is not live', async () => {
      const page = app.page
      await navigate(page, 'Tokens')
      await page.getByTestId('token-row').first().click()
      const detail = page.getByTestId('token-detail')
      await detail.getByTestId('reveal').click()
      await page.getByTestId('reveal-reason').locator('input').fill('Checking what a screen reader hears')
      await page.getByTestId('reveal-confirm').click()
      const polite = page.getByTestId('live-polite')
      await expect.poll(() => polite.textContent()).toBe('Plaintext shown for 30 seconds')
      expect(await polite.getAttribute('aria-live')).toBe('polite')

      const countdown = detail.getByTestId('reveal-countdown')
      const ticking = await countdown.textContent()
      await expect.poll(() => countdown.textContent(), { timeout: 3000 }).not.toBe(ticking)
      expect(await countdown.evaluate((element) => element.closest('[aria-live], [role="status"], [role="alert"], [role="timer"]') === null)).toBe(true)
      expect(await polite.textContent()).toBe('Plaintext shown for 30 seconds')

      await detail.getByRole('button', { name: 'Hide' }).click()
      await expect.poll(() => polite.textContent()).toBe('Plaintext hidden')
      await page.keyboard.press('Escape')
      await detail.waitFor({ state: 'detached' })
    })

    it('reads successes in the polite region and errors in the assertive one', async () => {
      const page = app.page
      await navigate(page, 'Members')
      for (const [email, region, text] of [
        ['not an address', 'live-assertive', 'Inviting failed'],
        ['hopper@example.com', 'live-polite', 'Invitation created. A mail to hopper@example.com is in the outbox.']
      ]) {
        await page.getByTestId('invite').click()
        await page.getByTestId('invite-email').locator('input').fill(email)
        await page.getByTestId('invite-submit').click()
        await expect.poll(() => page.getByTestId(region).textContent()).toContain(text)
        if (region === 'live-assertive') await page.keyboard.press('Escape')
      }
      expect(await page.getByTestId('live-assertive').getAttribute('role')).toBe('alert')
    })
  })
})
