/**
 * The Webhooks view against the real desktop handlers: create, edit and
 * delete a webhook, see the service's refusals at the field they name, and
 * read the delivery log of real deliveries — one to a receiver on 127.0.0.1,
 * one to a host that is not allowed (blocked, nothing sent).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chooseOption, chromiumAvailable, confirmDialog, errorsOf, screenshot } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import type { DesktopHarness } from './support/desktop-harness'

/** Answers every POST with 204 and keeps the event types it received. */
class Receiver {
  readonly events: string[] = []
  private server!: Server

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        this.events.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).event.type)
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/tessera-events`
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

/** A TEST-NET-1 address: neither loopback nor allowed, so deliveries to it are blocked without a connection. */
const NOT_ALLOWED_URL = 'http://192.0.2.10/tessera-events'

/** A token-changing action, as a program calling the vault would make one. */
function createToken(harness: DesktopHarness, data: string) {
  return harness.desktop.requireVault().services.tokens.create(harness.desktop.actor(), { type: 'token', data })
}

describe.skipIf(!chromiumAvailable)('Webhooks workflow', () => {
  const app = useDesktopApp({ view: 'Webhooks' })
  const receiver = new Receiver()
  const table = () => app.page.getByTestId('webhooks-table')
  const form = () => app.page.getByTestId('webhook-form')
  const log = () => app.page.getByTestId('webhook-deliveries')
  const logRows = () => log().getByTestId('deliveries-table').locator('tbody tr')

  beforeAll(() => receiver.start())
  afterAll(() => receiver.close())

  /** Clicks Refresh until the first row of the log (the newest delivery) shows `text`. */
  async function waitForNewest(page: Page, text: string): Promise<void> {
    await expect
      .poll(
        async () => {
          await log().getByTestId('refresh-deliveries').click()
          return logRows().first().textContent()
        },
        { timeout: 15_000, interval: 500 }
      )
      .toContain(text)
    expect(errorsOf(page)).toEqual([])
  }

  it('explains where deliveries may go', async () => {
    const note = app.page.getByTestId('allowed-hosts')
    expect(await note.textContent()).toContain('--webhook-allowed-hosts')
    expect(await note.textContent()).toContain('blocked')
  })

  it('creates a webhook; a bad URL is refused at the URL field first', async () => {
    await app.page.getByTestId('new-webhook').click()
    await form().getByTestId('webhook-name').locator('input').fill('Order system')
    await form().getByTestId('webhook-url').locator('input').fill('ftp://127.0.0.1/files')
    await form().getByText('token.created', { exact: true }).click()
    await form().getByText('token.deleted', { exact: true }).click()
    await form().getByTestId('webhook-submit').click()
    await expect.poll(() => form().getByTestId('webhook-url-item').textContent()).toContain('must be an http or https URL')
    await screenshot(app.page, 'webhook-form-error', 'light')

    await form().getByTestId('webhook-url').locator('input').fill(receiver.url)
    await form().getByTestId('webhook-submit').click()
    await form().waitFor({ state: 'detached' })
    const row = table().locator('tbody tr', { hasText: 'Order system' })
    await expect.poll(() => row.textContent()).toContain(receiver.url)
    expect(await row.textContent()).toContain('token.created, token.deleted')
    expect(await row.textContent()).toContain('enabled')
  })

  it('shows a real delivery in the log: delivered, with its attempt', async () => {
    await createToken(app.harness, 'order-1001')
    await expect.poll(() => receiver.events, { timeout: 10_000 }).toEqual(['token.created'])

    await table().getByTestId('deliveries').first().click()
    await log().waitFor()
    await waitForNewest(app.page, 'delivered')
    const newest = logRows().first()
    expect(await newest.textContent()).toContain('token.created')
    const attempt = (await newest.getByTestId('attempt').allTextContents()).join('\n')
    expect(attempt).toMatch(/delivered · HTTP 204 · \d+ ms/)
    await screenshot(app.page, 'webhook-deliveries', 'light')
    await log().getByTestId('close-deliveries').click()
    await log().waitFor({ state: 'detached' })
  })

  it('edits the webhook (every field replaced): a host that is not allowed makes the next delivery blocked', async () => {
    await table().getByTestId('edit-webhook').first().click()
    await form().getByTestId('webhook-name').locator('input').fill('Order system (staging)')
    await form().getByTestId('webhook-url').locator('input').fill(NOT_ALLOWED_URL)
    await form().getByTestId('webhook-email').locator('input').fill('ops@example.com')
    await form().getByTestId('webhook-submit').click()
    await form().waitFor({ state: 'detached' })
    await expect.poll(() => table().textContent()).toContain('Order system (staging)')
    expect(await table().textContent()).toContain(NOT_ALLOWED_URL)
    const [stored] = (await app.harness.desktop.requireVault().services.webhooks.list(app.harness.desktop.actor(), { page: 1, size: 20 })).data
    expect(stored).toMatchObject({ name: 'Order system (staging)', url: NOT_ALLOWED_URL, notify_email: 'ops@example.com', events: ['token.created', 'token.deleted'] })

    await createToken(app.harness, 'order-1002')
    await table().getByTestId('deliveries').first().click()
    await waitForNewest(app.page, 'blocked')
    expect(await logRows().first().textContent()).toContain('HOST_NOT_ALLOWED')
    expect(await logRows().count()).toBe(2)
    expect(receiver.events).toEqual(['token.created'])
  })

  it('filters the log by status', async () => {
    const status = log().getByTestId('delivery-status')
    await chooseOption(app.page, status, 'delivered')
    await expect.poll(() => logRows().count()).toBe(1)
    expect(await logRows().first().textContent()).toContain('HTTP 204')
    await chooseOption(app.page, status, 'failed')
    await expect.poll(() => log().getByTestId('deliveries-table').textContent()).toContain('No deliveries')
    await chooseOption(app.page, status, 'blocked')
    await expect.poll(() => logRows().first().textContent()).toContain('HOST_NOT_ALLOWED')
    await app.page.keyboard.press('Escape')
    await log().waitFor({ state: 'detached' })
  })

  it('refuses a sixth webhook and says why in the form', async () => {
    const services = app.harness.desktop.requireVault().services
    for (let i = 2; i <= 5; i++) await services.webhooks.create(app.harness.desktop.actor(), { name: `Receiver ${i}`, url: `${receiver.url}/${i}`, events: ['session.created'] })
    await app.page.getByTestId('new-webhook').click()
    await form().getByTestId('webhook-name').locator('input').fill('One too many')
    await form().getByTestId('webhook-url').locator('input').fill(receiver.url)
    await form().getByText('session.revoked', { exact: true }).click()
    await form().getByTestId('webhook-submit').click()
    await expect.poll(() => form().getByTestId('webhook-form-error').textContent()).toContain('at most 5 webhooks')
    await form().getByRole('button', { name: 'Cancel' }).click()
    await form().waitFor({ state: 'detached' })
  })

  it('deletes a webhook after confirming', async () => {
    await app.page.reload()
    await expect.poll(() => table().locator('tbody tr').count()).toBe(5)
    await table().getByRole('button', { name: 'Delete Order system (staging)' }).click()
    await confirmDialog(app.page, 'Delete')
    await expect.poll(() => table().textContent()).not.toContain('Order system (staging)')
    const left = (await app.harness.desktop.requireVault().services.webhooks.list(app.harness.desktop.actor(), { page: 1, size: 20 })).data
    expect(left.map((webhook) => webhook.name)).toEqual(['Receiver 2', 'Receiver 3', 'Receiver 4', 'Receiver 5'])
    expect(errorsOf(app.page)).toEqual([])
  })
})
