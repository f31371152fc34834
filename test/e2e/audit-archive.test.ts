import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { verifyAuditExportLines } from '../../src/main/bootstrap/offline-vault'
import { listLogsQuery } from '../../src/shared/contracts'
import { parse } from '../../src/main/app'
import { chromiumAvailable, confirmDialog, errorsOf } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import { seedVault } from './support/seed'

describe.skipIf(!chromiumAvailable)('Audit archive in Settings', () => {
  const app = useDesktopApp({ view: 'Settings', prepare: seedVault })

  it('saves a retention, then archives now: the file verifies offline and the log keeps only what came after', async () => {
    const { page, harness } = app
    const card = page.getByTestId('audit-archive-card')
    await card.getByLabel('Keep audit entries for').fill('30')
    await card.getByTestId('save-audit-retention').click()
    await expect.poll(() => card.textContent()).toContain('Entries older than 30 days are archived every hour.')

    const before = new Date().toISOString()
    await card.getByLabel('Archive the entries created before').fill(before)
    await card.getByTestId('archive-now').click()
    await confirmDialog(page, 'Archive')
    await expect.poll(() => card.getByTestId('archive-file').textContent(), { timeout: 30_000 }).toContain('audit-archive')

    const file = (await card.getByTestId('archive-file').textContent())!
    const report = await verifyAuditExportLines(() => createInterface({ input: createReadStream(file), crlfDelay: Infinity }))
    expect(report).toMatchObject({ intact: true, firstSeq: 1 })
    expect(await card.getByTestId('archive-last').textContent()).toContain(`${report.intact && report.entries} entries`)
    const { desktop } = harness
    const left = await desktop.requireVault().services.logs.list(desktop.actor(), parse(listLogsQuery, { size: 100 }))
    expect(left.data.every((entry) => entry.created_at >= before)).toBe(true)
    expect(errorsOf(page)).toEqual([])
  })
})
