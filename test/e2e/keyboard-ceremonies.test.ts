/**
 * Settings' key ceremonies and audit archive by keyboard alone: each action
 * reached with Tab, its confirmation answered with the keyboard, what the
 * card then shows, and where focus lands (also when the action disables or
 * removes the button that started it).
 */
import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { loadMasterKey } from '../../src/main/bootstrap/master-key'
import { verifyAuditExportLines } from '../../src/main/bootstrap/offline-vault'
import { chromiumAvailable, errorsOf, expectNotification } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { DIALOG_CONFIRM, expectFocus, tabTo, typeOver } from './support/keyboard'
import { seedVault } from './support/seed'

describe.skipIf(!chromiumAvailable)('Key ceremonies and the audit archive by keyboard', () => {
  const app = useDesktopApp({ prepare: seedVault })
  const page = () => app.page
  const keysCard = () => page().getByTestId('keys-card')
  const archiveCard = () => page().getByTestId('audit-archive-card')
  const dialog = () => page().locator('.n-dialog')
  const report = () => page().getByTestId('key-report')

  /** Presses Enter on the focused button, then the confirming button of the dialog it opens. */
  async function confirmWithKeyboard(): Promise<void> {
    await page().keyboard.press('Enter')
    await dialog().waitFor()
    await tabTo(page(), DIALOG_CONFIRM)
    await page().keyboard.press('Enter')
    await dialog().waitFor({ state: 'detached' })
  }

  it('rotates the data key; focus follows the re-encryption on its progress line', async () => {
    await page().getByTestId('token-row').first().waitFor()
    await page().keyboard.press('Alt+7')
    await expectFocus(page(), 'main h1')
    await expect.poll(() => keysCard().getByTestId('key-version-1').textContent()).toMatch(/current.*6 tokens, 1 outbox mail/)

    await tabTo(page(), '[data-test=rotate-data-key]', { maxPresses: 60 })
    await confirmWithKeyboard()
    await expectFocus(page(), '[data-test=rotation]')
    await expect.poll(() => keysCard().getByTestId('key-version-2').textContent()).toContain('current')
    await expect.poll(() => keysCard().getByTestId('rotation').textContent(), { timeout: 30_000 }).toMatch(/Last rotation to v2 finished .* \(7 objects re-encrypted\)/)
    expect(await keysCard().getByTestId('key-version-2').textContent()).toContain('6 tokens, 1 outbox mail')
    await expectFocus(page(), '[data-test=rotation]')
    // The next Tab reaches the button again, enabled once the rotation is done.
    await tabTo(page(), '[data-test=rotate-data-key]', { maxPresses: 1 })
  })

  it('retires the old version after a cancelled first try; closing its report puts focus on the Report button that replaced Retire', async () => {
    await tabTo(page(), '[data-test=retire-1]', { backwards: true })
    await page().keyboard.press('Enter')
    await dialog().waitFor()
    await page().keyboard.press('Escape')
    await dialog().waitFor({ state: 'detached' })
    await expectFocus(page(), '[data-test=retire-1]')
    expect(await keysCard().getByTestId('key-version-1').textContent()).not.toContain('retired')

    await confirmWithKeyboard()
    await expect.poll(() => report().textContent()).toContain('"retired_version": 1')
    await expectFocus(page(), '[data-test=key-report] button')
    await page().keyboard.press('Escape')
    await report().waitFor({ state: 'detached' })
    await expect.poll(() => keysCard().getByTestId('key-version-1').textContent()).toContain('retired')
    await expectFocus(page(), '[data-test=report-1]')
  })

  it('opens the report of a retired version and saves it as a file; Escape brings focus back to Report', async () => {
    await page().keyboard.press('Enter')
    await expect.poll(() => report().textContent()).toContain('"retired_version": 1')
    await tabTo(page(), /"Save as file"$/)
    const [download] = await Promise.all([page().waitForEvent('download'), page().keyboard.press('Enter')])
    expect(download.suggestedFilename()).toBe('key-retirement-v1.json')
    expect(JSON.parse(await readFile((await download.path())!, 'utf8'))).toMatchObject({ retired_version: 1 })
    await expectFocus(page(), /"Save as file"$/)

    await page().keyboard.press('Escape')
    await report().waitFor({ state: 'detached' })
    await expectFocus(page(), '[data-test=report-1]')
  })

  it('rotates the master key in the key file; focus stays on its button', async () => {
    const before = await loadMasterKey(app.harness.dataDir, {})
    await tabTo(page(), '[data-test=rotate-master-key]')
    await confirmWithKeyboard()
    await expectNotification(page(), 'Master key rotated')
    expect(await loadMasterKey(app.harness.dataDir, {})).not.toEqual(before)
    await expectFocus(page(), '[data-test=rotate-master-key]')
  })

  it('saves the audit retention; the card states it and focus stays on Save retention', async () => {
    await tabTo(page(), '#audit-retention-days')
    await typeOver(page(), '30')
    await tabTo(page(), '[data-test=save-audit-retention]')
    await page().keyboard.press('Enter')
    // Stated once saved, after the settings save has restarted the service.
    await archiveCard().getByText('Entries older than 30 days are archived every hour.').waitFor()
    expect(app.harness.desktop.settings.view().auditRetentionDays).toBe(30)
    await expectFocus(page(), '[data-test=save-audit-retention]')
  })

  it('archives now after confirming; the card shows the file, and focus comes back to Archive now', async () => {
    await tabTo(page(), '#audit-archive-before')
    await typeOver(page(), new Date().toISOString())
    await tabTo(page(), '[data-test=archive-now]')
    await confirmWithKeyboard()
    await expect.poll(() => archiveCard().getByTestId('archive-file').textContent(), { timeout: 30_000 }).toContain('audit-archive')
    await expectFocus(page(), '[data-test=archive-now]')

    const file = (await archiveCard().getByTestId('archive-file').textContent())!
    const verified = await verifyAuditExportLines(() => createInterface({ input: createReadStream(file), crlfDelay: Infinity }))
    expect(verified).toMatchObject({ intact: true, firstSeq: 1 })
    expect(await archiveCard().getByTestId('archive-last').textContent()).toContain(`${verified.intact && verified.entries} entries`)
    expect(errorsOf(page())).toEqual([])
  })
})
