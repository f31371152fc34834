import { describe, expect, it } from 'vitest'
import { loadMasterKey } from '../../src/main/bootstrap/master-key'
import { chromiumAvailable, confirmDialog, errorsOf, screenshot } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { CARD_NUMBERS, seedVault } from './support/seed'
import { listTokensQuery } from '../../src/shared/contracts'
import { parse } from '../../src/main/app'

describe.skipIf(!chromiumAvailable)('Key ceremonies in Settings', () => {
  const app = useDesktopApp({ view: 'Settings', prepare: seedVault })

  it('rotates the data key with a progress bar, then retires the old version and shows the report', async () => {
    const { page } = app
    const card = page.getByTestId('keys-card')
    await expect.poll(() => card.getByTestId('key-version-1').textContent()).toMatch(/current.*6 tokens, 1 outbox mail/)

    await card.getByTestId('rotate-data-key').click()
    await confirmDialog(page, 'Rotate')
    await expect.poll(() => card.getByTestId('key-version-2').textContent()).toContain('current')
    // The service's background pass moves everything onto v2; the card follows it.
    await expect.poll(() => card.getByTestId('rotation').textContent(), { timeout: 30_000 }).toMatch(/Last rotation to v2 finished .* \(7 objects re-encrypted\)/)
    expect(await card.getByTestId('key-version-2').textContent()).toContain('6 tokens, 1 outbox mail')
    await card.scrollIntoViewIfNeeded()
    await screenshot(page, 'settings-keys', 'light')

    await card.getByTestId('retire-1').click()
    await confirmDialog(page, 'Retire')
    const report = page.getByTestId('key-report')
    await expect.poll(() => report.textContent()).toContain('"retired_version": 1')
    expect(await report.textContent()).toContain('"tessera-data-key-retirement"')
    await page.keyboard.press('Escape')
    await expect.poll(() => card.getByTestId('key-version-1').textContent()).toContain('retired')

    const services = app.harness.desktop.requireVault().services
    const [token] = (await services.tokens.list(app.harness.desktop.actor(), parse(listTokensQuery, { type: 'card', size: 100 }))).data
    const revealed = await services.tokens.reveal(app.harness.desktop.actor(), token.id, 'after rotation')
    expect(CARD_NUMBERS).toContain((revealed.data as { number: string }).number)
    expect(errorsOf(page)).toEqual([])
  })

  it('rotates the master key in the key file; the vault unlocks with the new key', async () => {
    const { page, harness } = app
    const before = await loadMasterKey(harness.dataDir, {})
    await page.getByTestId('rotate-master-key').click()
    await confirmDialog(page, 'Rotate master key')
    await expect.poll(() => page.locator('.n-notification').filter({ hasText: 'Master key rotated' }).count()).toBeGreaterThan(0)
    expect(await loadMasterKey(harness.dataDir, {})).not.toEqual(before)
    await harness.desktop.lock()
    expect((await harness.desktop.unlock()).state).toBe('unlocked')
    expect(errorsOf(page)).toEqual([])
  })
})
