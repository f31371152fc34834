/**
 * The audit log view opens on its rows first: it asks for the page of entries,
 * and for the activity chart's counts only once that page has answered; the
 * chart then shows the entries it counted.
 */
import type { Request } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf, navigate } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { seedVault } from './support/seed'

const channelOf = (request: Request) => new URL(request.url()).pathname.replace('/__ipc/app:', '')

describe.skipIf(!chromiumAvailable)('Audit log view', () => {
  const app = useDesktopApp({ prepare: seedVault })

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
})
