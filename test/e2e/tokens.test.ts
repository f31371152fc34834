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

  it('shows the whole text of a clipped cell in a tooltip while the pointer rests on it', async () => {
    const note = `${'a long note '.repeat(30)}end of note`
    await app.page.keyboard.press('Escape')
    await app.page.getByTestId('token-detail').waitFor({ state: 'detached' })
    await app.harness.desktop.requireVault().services.tokens.create(app.harness.desktop.actor(), { type: 'token', data: 'clipped', metadata: { note } })
    await app.page.getByRole('button', { name: 'Refresh' }).click()
    const cell = app.page.getByTestId('token-row').first().locator('td').filter({ hasText: 'a long note' })
    await cell.locator('.n-ellipsis').hover()
    await expect.poll(() => app.page.locator('.n-popover').filter({ hasText: 'end of note' }).isVisible()).toBe(true)
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
