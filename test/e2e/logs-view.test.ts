/**
 * The audit log view opens on its rows first: it asks for the page of entries,
 * and for the activity chart's counts only once that page has answered; the
 * chart then shows the entries it counted. An entry opens in full, with the
 * trace id of the REST request that wrote it.
 */
import type { Request } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf, navigate, VIEWPORT } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import type { DesktopHarness } from './support/desktop-harness'
import { activityChartDrawing } from './support/in-page'
import { seedVault } from './support/seed'

const channelOf = (request: Request) => new URL(request.url()).pathname.replace('/__ipc/app:', '')

describe.skipIf(!chromiumAvailable)('Audit log view', () => {
  /** The seeded vault, and one token stored over REST with a trace id (the newest entry). */
  async function prepare(harness: DesktopHarness): Promise<void> {
    const { privateKey } = await seedVault(harness)
    const response = await fetch(`${await harness.serviceUrl()}/tokens`, {
      method: 'POST',
      headers: { 'svc-api-key': privateKey, 'content-type': 'application/json', 'bt-trace-id': 'checkout-order-7781' },
      body: JSON.stringify({ type: 'token', data: 'order-7781' })
    })
    expect(response.status).toBe(201)
  }
  const app = useDesktopApp({ prepare })

  it('shows the rows without waiting for the chart, then the chart of what it counted', async () => {
    const events: string[] = []
    app.page.on('request', (request) => request.url().includes('/__ipc/app:logs.') && events.push(`asked ${channelOf(request)}`))
    app.page.on('requestfinished', (request) => request.url().includes('/__ipc/app:logs.') && events.push(`answered ${channelOf(request)}`))

    await navigate(app.page, 'Audit logs')
    await app.page.getByTestId('logs-table').locator('tbody tr.n-data-table-tr').first().waitFor()
    const chart = app.page.locator('.activity canvas')
    await expect.poll(() => chart.getAttribute('aria-label')).toMatch(/^Audit entries over time: [1-9]\d* in total$/)

    const logEvents = events.filter((event) => !event.endsWith('entityTypes'))
    expect(logEvents).toEqual(['asked logs.list', 'answered logs.list', 'asked logs.activity', 'answered logs.activity'])
    expect(errorsOf(app.page)).toEqual([])
  })

  it('draws the chart across its box, after the window is resized, moved to a denser screen and after a visit to another view', async () => {
    const drawing = () => app.page.evaluate(activityChartDrawing)
    const filledAndDrawn = async () => {
      const { boxWidth, canvasWidth, drawn } = await drawing()
      return boxWidth > 0 && canvasWidth === boxWidth && drawn
    }
    await navigate(app.page, 'Audit logs')
    await expect.poll(filledAndDrawn).toBe(true)
    const wide = (await drawing()).boxWidth

    await app.page.setViewportSize({ width: VIEWPORT.width - 300, height: VIEWPORT.height })
    await expect.poll(async () => (await drawing()).boxWidth).toBeLessThan(wide)
    await expect.poll(filledAndDrawn).toBe(true)

    // A window moved to a screen of twice the pixel density (and another width: Chromium's emulation reports a density alone late).
    const screen = await app.page.context().newCDPSession(app.page)
    await screen.send('Emulation.setDeviceMetricsOverride', { width: VIEWPORT.width - 200, height: VIEWPORT.height, deviceScaleFactor: 2, mobile: false })
    await expect.poll(filledAndDrawn).toBe(true)
    await expect.poll(async () => {
      const { boxWidth, pixelWidth } = await drawing()
      return pixelWidth === 2 * boxWidth
    }).toBe(true)
    await screen.send('Emulation.clearDeviceMetricsOverride')

    await navigate(app.page, 'Applications')
    await app.page.setViewportSize(VIEWPORT)
    await navigate(app.page, 'Audit logs')
    await expect.poll(async () => (await drawing()).boxWidth).toBe(wide)
    await expect.poll(filledAndDrawn).toBe(true)
    expect(errorsOf(app.page)).toEqual([])
  })

  it('draws another page of entries at once: nothing in its rows fades in', async () => {
    await navigate(app.page, 'Audit logs')
    const table = app.page.getByTestId('logs-table')
    const rows = table.locator('tbody tr.n-data-table-tr')
    await rows.first().waitFor()
    const pageText = () => table.locator('tbody').textContent()
    const firstPage = await pageText()
    await table.locator('[aria-label="Next page"]').click()
    await expect.poll(pageText).not.toBe(firstPage)
    // Badges whose colours faded for 300 ms repainted the whole window in every frame of it.
    expect(await table.locator('tbody').evaluate((body) => body.getAnimations({ subtree: true }).length)).toBe(0)
    await table.locator('[aria-label="Previous page"]').click()
    await expect.poll(() => table.locator('.n-pagination-item--active').textContent()).toBe('1')
    await expect.poll(() => app.page.locator('main [aria-busy="true"]').count()).toBe(0)
  })

  it('opens an entry in full by keyboard, with the trace id of the request that wrote it, and one written in the window without', async () => {
    await navigate(app.page, 'Audit logs')
    const rows = app.page.getByTestId('log-row')
    const created = rows.filter({ hasText: 'create' }).filter({ hasText: 'token' }).first()
    await created.focus()
    await app.page.keyboard.press('Enter')
    const detail = app.page.getByTestId('log-entry-detail')
    await expect.poll(() => detail.getByTestId('log-entry-trace').textContent()).toBe('checkout-order-7781')
    await app.page.keyboard.press('Escape')
    await detail.waitFor({ state: 'hidden' })

    // The application made in the window: no REST request, no trace id.
    await rows.filter({ hasText: 'Application created' }).first().click()
    await expect.poll(() => detail.getByTestId('log-entry-trace').textContent()).toMatch(/^none: not a REST request/)
    expect(errorsOf(app.page)).toEqual([])
  })
})
