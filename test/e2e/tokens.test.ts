import { describe, expect, it } from 'vitest'
import { chooseOption, chromiumAvailable, errorsOf, screenshot } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { listLogsQuery } from '../../src/shared/contracts'
import { parse } from '../../src/main/app'

describe.skipIf(!chromiumAvailable)('Tokens view', () => {
  const app = useDesktopApp()

  it('shows an empty state before any token exists', async () => {
    await expect.poll(() => app.page.getByText('No tokens yet').isVisible()).toBe(true)
  })

  it('creates a card token from the form and lists it masked', async () => {
    await app.page.getByTestId('new-token').click()
    const form = app.page.getByTestId('token-form')
    await chooseOption(app.page, form.getByTestId('token-type'), 'card')
    await form.getByTestId('token-data').locator('textarea').fill('{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2030}')
    await form.getByTestId('token-submit').click()
    const row = app.page.getByTestId('token-row').first()
    await expect.poll(() => row.textContent()).toContain('XXXXXXXXXXXX4242')
    expect(await row.textContent()).not.toContain('4242424242424242')
  })

  it('opens a token from the keyboard and closes it with Escape', async () => {
    await app.page.getByTestId('token-row').first().focus()
    await app.page.keyboard.press('Enter')
    const detail = app.page.getByTestId('token-detail')
    await detail.waitFor()
    await app.page.keyboard.press('Escape')
    await detail.waitFor({ state: 'detached' })
  })

  it('reveals a token for a limited time after asking for a reason, and logs it', async () => {
    await app.page.getByTestId('token-row').first().click()
    const detail = app.page.getByTestId('token-detail')
    await expect.poll(() => detail.isVisible()).toBe(true)
    const id = (await detail.getByTestId('detail-id').textContent())!
    await detail.getByTestId('reveal').click()
    await app.page.getByTestId('reveal-reason').locator('input').fill('Support ticket 4821')
    await app.page.getByTestId('reveal-confirm').click()
    await expect.poll(() => detail.getByTestId('revealed-data').textContent()).toContain('4242424242424242')
    await screenshot(app.page, 'token-revealed', 'light')

    const logs = await app.harness.desktop.requireVault().services.logs.list(app.harness.desktop.actor(), parse(listLogsQuery, { entity_id: id }))
    expect(logs.data.map((entry) => entry.message)).toContain('Token revealed: Support ticket 4821')
    expect(errorsOf(app.page)).toEqual([])
  })

  it('shows the whole text of a clipped cell in a tooltip above it while the pointer rests on it, and nothing for text that fits', async () => {
    const page = app.page
    const note = `${'a long note '.repeat(30)}end of note`
    await page.keyboard.press('Escape')
    await page.getByTestId('token-detail').waitFor({ state: 'detached' })
    const services = app.harness.desktop.requireVault().services
    await services.tokens.create(app.harness.desktop.actor(), { type: 'token', data: 'clipped', metadata: { note } })
    await services.tokens.create(app.harness.desktop.actor(), { type: 'token', data: 'fits', metadata: { team: 'ops' } })
    await page.getByRole('button', { name: 'Refresh' }).click()
    const metadataCell = (text: string) => page.getByTestId('token-row').locator('td .n-data-table-td__ellipsis').filter({ hasText: text })
    const tooltips = page.locator('.n-popover:visible')

    const clipped = metadataCell('a long note')
    await clipped.hover()
    await expect.poll(() => tooltips.filter({ hasText: 'end of note' }).count()).toBe(1)
    const [tip, cell] = [(await tooltips.boundingBox())!, (await clipped.boundingBox())!]
    expect(tip.y + tip.height).toBeLessThanOrEqual(cell.y + 1)
    // Its arrow points at the cell's middle; the tooltip reaches to the side with room for it.
    expect(tip.x).toBeLessThanOrEqual(cell.x + cell.width / 2)
    expect(tip.x + tip.width).toBeGreaterThanOrEqual(cell.x + cell.width / 2)

    await metadataCell('team=ops').hover()
    await expect.poll(() => tooltips.count()).toBe(0)
    // Longer than a tooltip waits before it shows: text that fits shows none.
    await page.waitForTimeout(500)
    expect(await tooltips.count()).toBe(0)
  })

  it('leaves no menu behind when another view shows, and shows the rows of the moment when it shows again', async () => {
    const page = app.page
    await page.mouse.move(0, 0)
    await page.locator('.n-popover').waitFor({ state: 'detached' })
    await page.getByTestId('filter-type').click()
    await page.locator('.n-base-select-menu').waitFor()
    await page.keyboard.press('Alt+7')
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    await expect.poll(() => page.locator('.n-base-select-menu, [data-test=token-row]').count()).toBe(0)

    const { token } = await app.harness.desktop.requireVault().services.tokens.create(app.harness.desktop.actor(), { type: 'token', data: 'made while away' })
    await page.keyboard.press('Alt+1')
    await page.getByTestId('token-row').filter({ hasText: token.id }).waitFor()
    expect(await page.locator('main h1').evaluate((heading) => heading === heading.ownerDocument.activeElement)).toBe(true)
  })
})
