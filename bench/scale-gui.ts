/**
 * The GUI's page loads over a seeded vault: the built renderer in headless
 * Chromium over the desktop handlers (the browser tests' harness, opened on
 * the existing data folder), timed from the request to the first rows shown.
 *
 *   node bin/run-ts.cjs bench/scale-gui.ts <data dir> <loads> <group> <expected group size>
 *
 * Prints one JSON line, `GuiTimes` (milliseconds per load). With BENCH_GUI_PIN=1
 * Chromium stays on the core this process started on (the load generator's)
 * and the harness — the app's main process — moves to the server's core.
 */
import { spawnSync } from 'node:child_process'
import type { Browser, Page } from 'playwright-core'
import buildRenderer from '../test/e2e/global-setup'
import { launchBrowser, openApp } from '../test/e2e/support/browser'
import { startDesktopHarness, type DesktopHarness } from '../test/e2e/support/desktop-harness'
import { SERVER_CPU } from './children'

export interface GuiTimes {
  /** `#/tokens` opened in a new page until its first token row shows. */
  tokensPage: number[]
  /** Search with a metadata filter clicked until the filtered rows and their count show. */
  tokensFiltered: number[]
  /** `#/logs` opened in a new page until its first entry shows. */
  logsPage: number[]
  /** Audit logs clicked in the sidebar of the open app (on the tokens view) until the view's first entry shows: the view alone, without the app's start. */
  logsFromSidebar: number[]
}

const TOKEN_ROW = '[data-test="tokens-table"] [data-test="token-row"]'
const LOG_ROW = '[data-test="logs-table"] tbody tr.n-data-table-tr'
/** A slow load is a figure to report, not a failure: wait up to a minute. */
const WAIT = { timeout: 60_000 }

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await work()
  return performance.now() - started
}

/** Opens `path` in a new page; resolves with the time until `rowSelector` shows, and the page. */
async function pageLoad(browser: Browser, harness: DesktopHarness, path: string, rowSelector: string): Promise<{ ms: number; page: Page }> {
  let page: Page | undefined
  const ms = await timed(async () => {
    page = await openApp(browser, harness, 'light', path)
    await page.locator(rowSelector).first().waitFor(WAIT)
  })
  return { ms, page: page! }
}

/** Clicks Audit logs in the open app's sidebar; resolves with the time until the view's first entry shows. */
function sidebarToLogs(page: Page): Promise<number> {
  return timed(async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit logs' }).click()
    await page.locator(LOG_ROW).first().waitFor(WAIT)
  })
}

/** Searches the open tokens view by `group`; resolves with the time from the click until its rows and count show. */
async function filteredSearch(page: Page, group: string, expectedCount: number): Promise<number> {
  await page.getByTestId('filter-metadata').click()
  await page.getByRole('button', { name: 'Add metadata filter' }).click()
  await page.getByPlaceholder('key').fill('group')
  await page.getByPlaceholder('value').fill(group)
  await page.keyboard.press('Escape')
  const table = page.getByTestId('tokens-table')
  return timed(async () => {
    await page.getByTestId('apply-filters').click()
    await table.locator('.n-pagination', { hasText: `${expectedCount.toLocaleString('en')} tokens` }).waitFor(WAIT)
    await page.locator(TOKEN_ROW).first().waitFor(WAIT)
  })
}

export async function measureGui(dataDir: string, loads: number, group: string, expectedCount: number): Promise<GuiTimes> {
  await buildRenderer()
  const browser = await launchBrowser()
  if (process.env.BENCH_GUI_PIN === '1') spawnSync('taskset', ['--all-tasks', '--cpu-list', '--pid', String(SERVER_CPU), String(process.pid)], { stdio: 'ignore' })
  const harness = await startDesktopHarness({ dataDir })
  const times: GuiTimes = { tokensPage: [], tokensFiltered: [], logsPage: [], logsFromSidebar: [] }
  try {
    // One untimed round first: the browser's and the service's caches warm up as a user's would.
    for (let load = 0; load <= loads; load++) {
      const tokens = await pageLoad(browser, harness, '/tokens', TOKEN_ROW)
      const filtered = await filteredSearch(tokens.page, group, expectedCount)
      const fromSidebar = await sidebarToLogs(tokens.page)
      await tokens.page.context().close()
      const logs = await pageLoad(browser, harness, '/logs', LOG_ROW)
      await logs.page.context().close()
      if (load === 0) continue
      times.tokensPage.push(tokens.ms)
      times.tokensFiltered.push(filtered)
      times.logsPage.push(logs.ms)
      times.logsFromSidebar.push(fromSidebar)
    }
    return times
  } finally {
    await browser.close()
    await harness.stop()
  }
}

if (process.argv[1] === __filename) {
  const [dataDir, loads, group, expected] = process.argv.slice(2)
  measureGui(dataDir, Number(loads), group, Number(expected)).then(
    (times) => {
      process.stdout.write(`${JSON.stringify(times)}\n`)
      process.exit(0)
    },
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
}
