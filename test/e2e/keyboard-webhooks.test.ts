/**
 * Webhooks by keyboard alone: Alt+8 to the view, create, edit, read the
 * delivery log with its status filter, delete; what the user then sees, and
 * where focus lands.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { DIALOG_CONFIRM, expectFocus, pickOptionNamed, tabTo, typeOver } from './support/keyboard'

describe.skipIf(!chromiumAvailable)('Webhooks by keyboard', () => {
  const app = useDesktopApp()
  const page = () => app.page
  const table = () => page().getByTestId('webhooks-table')
  const log = () => page().getByTestId('webhook-deliveries')
  let received = 0
  let receiver: Server

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        received++
        response.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  })
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())))

  const receiverUrl = () => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`

  it('goes to Webhooks with Alt+8, focus on its heading', async () => {
    await page().getByTestId('service-url').waitFor()
    await page().keyboard.press('Alt+8')
    await expectFocus(page(), 'main h1')
    expect(await page().locator('main h1').textContent()).toBe('Webhooks')
    expect(await page().title()).toBe('Webhooks — Tessera')
  })

  it('creates a webhook; Alt+1 does not leave the open form; focus is back on New webhook', async () => {
    await tabTo(page(), '[data-test=new-webhook]')
    await page().keyboard.press('Enter')
    await page().getByTestId('webhook-form').waitFor()
    await page().keyboard.press('Alt+1')
    await tabTo(page(), '[data-test=webhook-name] input')
    await page().keyboard.type('Order system')
    await tabTo(page(), '[data-test=webhook-url] input')
    await page().keyboard.type(receiverUrl())
    await tabTo(page(), /\(checkbox\).*"token\.created"/)
    await page().keyboard.press(' ')
    await tabTo(page(), '[data-test=webhook-submit]')
    await page().keyboard.press('Enter')
    await expect.poll(() => table().textContent()).toContain('Order system')
    expect(page().url()).toContain('#/webhooks')
    await page().getByTestId('webhook-form').waitFor({ state: 'detached' })
    await expectFocus(page(), '[data-test=new-webhook]')
  })

  it('edits the webhook; a refused URL puts the message at the field, and focus comes back to Edit', async () => {
    await tabTo(page(), '[data-test=edit-webhook]')
    await page().keyboard.press('Enter')
    const form = page().getByTestId('webhook-form')
    await form.waitFor()
    await tabTo(page(), '[data-test=webhook-url] input')
    await typeOver(page(), 'mailto:ops@example.com')
    await page().keyboard.press('Enter')
    await expect.poll(() => form.getByTestId('webhook-url-item').textContent()).toContain('must be an http or https URL')
    await expect.poll(() => page().getByTestId('live-assertive').textContent()).toContain('Saving the webhook failed')
    await expectFocus(page(), '[data-test=webhook-url] input')
    await typeOver(page(), receiverUrl())
    await tabTo(page(), '[data-test=webhook-name] input', { backwards: true })
    await typeOver(page(), 'Order system (live)')
    await tabTo(page(), '[data-test=webhook-submit]')
    await page().keyboard.press('Enter')
    await expect.poll(() => table().textContent()).toContain('Order system (live)')
    await form.waitFor({ state: 'detached' })
    await expectFocus(page(), '[data-test=edit-webhook]')
  })

  it('opens the delivery log, filters it and refreshes it; Escape closes it and focus is back on Deliveries', async () => {
    await app.harness.desktop.requireVault().services.tokens.create(app.harness.desktop.actor(), { type: 'token', data: 'order-2001' })
    await expect.poll(() => received, { timeout: 10_000 }).toBe(1)
    await tabTo(page(), '[data-test=deliveries]', { backwards: true })
    await page().keyboard.press('Enter')
    await log().waitFor()
    await tabTo(page(), /\[data-test=delivery-status\]/)
    await pickOptionNamed(page(), 'delivered')
    await tabTo(page(), '[data-test=refresh-deliveries]')
    await page().keyboard.press('Enter')
    const rows = log().getByTestId('deliveries-table').locator('tbody tr')
    await expect.poll(() => rows.first().textContent()).toContain('token.created')
    expect(await rows.first().textContent()).toContain('HTTP 200')
    await expectFocus(page(), '[data-test=refresh-deliveries]')
    await page().keyboard.press('Escape')
    await log().waitFor({ state: 'detached' })
    await expectFocus(page(), '[data-test=deliveries]')
  })

  it('deletes the webhook after confirming; focus goes to New webhook', async () => {
    await tabTo(page(), '[data-test=delete-webhook]')
    await page().keyboard.press('Enter')
    await page().locator('.n-dialog').waitFor()
    await tabTo(page(), DIALOG_CONFIRM)
    await page().keyboard.press('Enter')
    await expect.poll(() => table().textContent()).toContain('No webhooks')
    await page().locator('.n-dialog').waitFor({ state: 'detached' })
    await expectFocus(page(), '[data-test=new-webhook]')
    expect(errorsOf(page())).toEqual([])
  })
})
