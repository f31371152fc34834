/**
 * A pager with more pages than it shows puts "…" between them; hovering one
 * opens a menu of the pages it stands for, made only as it opens (the renderer's
 * build patches naive-ui's pager: vite.renderer.config.ts). Picking a page there shows it.
 */
import { describe, expect, it } from 'vitest'
import { chromiumAvailable, errorsOf } from './support/browser'
import { useDesktopApp } from './support/desktop-app'
import type { DesktopHarness } from './support/desktop-harness'

/** 21 pages of 20 tokens: the pager shows 1–7, "…" and 21. */
const TOKENS = 410

async function prepare(harness: DesktopHarness): Promise<void> {
  const tokens = Array.from({ length: TOKENS }, (_, i) => ({ type: 'token', data: `value-${i}` }))
  await harness.desktop.requireVault().services.tokenize.run(harness.desktop.actor(), tokens)
}

describe.skipIf(!chromiumAvailable)("The pager's menu of the pages a \"…\" stands for", () => {
  const app = useDesktopApp({ prepare })

  it('lists the later pages when the pointer is on "…", and shows the page picked there', async () => {
    const table = app.page.getByTestId('tokens-table')
    const pager = table.locator('.n-pagination')
    await expect.poll(() => pager.locator('.n-pagination-prefix').textContent()).toMatch(/^410 tokens/)
    await pager.getByRole('button', { name: 'Later pages' }).hover()

    const menu = app.page.locator('.n-popselect-menu')
    await menu.waitFor()
    await expect.poll(async () => (await menu.locator('.n-base-select-option').allTextContents()).slice(0, 3)).toEqual(['8', '9', '10'])
    await menu.locator('.n-base-select-option', { hasText: /^9$/ }).click()

    await expect.poll(() => pager.locator('.n-pagination-item--active').textContent()).toBe('9')
    await expect.poll(() => table.getByTestId('token-row').count()).toBe(20)
    expect(errorsOf(app.page)).toEqual([])
  })
})
