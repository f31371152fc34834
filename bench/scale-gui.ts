/**
 * The GUI's page loads over a seeded vault: the built renderer in headless
 * Chromium over the desktop handlers (the browser tests' harness, opened on
 * the existing data folder), timed from the request to the first rows shown.
 *
 *   node bin/run-ts.cjs bench/scale-gui.ts <data dir> <loads> <group> <expected group size>
 *
 * Prints one JSON line, `GuiTimes` (milliseconds per load). With BENCH_GUI_PIN=1
 * the processes are laid out on two cores as Electron's are: Chromium's renderers
 * on the load generator's core; its browser process (in Electron, the app's main
 * process), GPU and utility processes, with the harness (the main process's IPC
 * handlers and the service), on the server's.
 */
import { readdirSync } from 'node:fs'
import type { Browser, Locator, Page } from 'playwright-core'
import buildRenderer from '../test/e2e/global-setup'
import { launchBrowser, openApp } from '../test/e2e/support/browser'
import { startDesktopHarness, type DesktopHarness } from '../test/e2e/support/desktop-harness'
import { processInfo, type ProcessInfo } from '../src/main/infra/processes'
import { LOAD_CPU, pinToCore, SERVER_CPU } from './children'
import { armClickTimer, clickTimerResult, type Shown } from './click-timer'

export interface GuiTimes {
  /** `#/tokens` opened in a new page until its first token row shows: the app's start included. */
  tokensPage: number[]
  /** Tokens clicked in the sidebar of the open app until the view's first rows are drawn, timed in the page. */
  tokensFromSidebar: number[]
  /** Search with a metadata filter clicked until the filtered rows and their count are drawn, timed in the page. */
  tokensFiltered: number[]
  /** `#/logs` opened in a new page until its first entry shows. */
  logsPage: number[]
  /** Audit logs clicked in the sidebar of the open app (on the tokens view) until the entries it read are drawn, timed in the page: the view alone, without the app's start. */
  logsFromSidebar: number[]
  /** Audit logs clicked again in the sidebar after another view (Applications), until the entries it read are drawn, timed in the page. */
  logsReturn: number[]
  /** As tokensFromSidebar, in one window that has already switched views SETTLING_SWITCHES times, as a window in use for a while has. */
  settledTokensFromSidebar: number[]
  /** As logsReturn, in that settled window. */
  settledLogsReturn: number[]
}

/**
 * Switches made in one window before its settled switches are timed: the first
 * runs of the views' code are interpreted and compiled as they go (V8 tiers it
 * up), which each new window of the loads above pays again.
 */
const SETTLING_SWITCHES = 5

const TOKEN_ROW = '[data-test="tokens-table"] [data-test="token-row"]'
const LOG_ROW = '[data-test="logs-table"] tbody tr.n-data-table-tr'
/** A slow load is a figure to report, not a failure: wait up to a minute. */
const WAIT = { timeout: 60_000 }

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await work()
  return performance.now() - started
}

/** The processes descended from `ancestor`, with their command lines. */
function descendants(ancestor: number): { pid: number; command: string }[] {
  const processes = new Map<number, ProcessInfo>()
  for (const entry of readdirSync('/proc')) {
    const info = /^\d+$/.test(entry) ? processInfo(Number(entry)) : undefined
    if (info) processes.set(Number(entry), info)
  }
  const isDescendant = (pid: number): boolean => {
    for (let parent = processes.get(pid)?.ppid; parent !== undefined && parent > 1; parent = processes.get(parent)?.ppid) if (parent === ancestor) return true
    return false
  }
  return [...processes].filter(([pid]) => isDescendant(pid)).map(([pid, { command }]) => ({ pid, command }))
}

/**
 * Electron's layout of a window's processes on two cores: what draws the window (Chromium's
 * renderers, and the zygote they are forked from, so that later ones start there too) on the
 * load generator's core; everything else, and this process, on the server's. Putting all of
 * Chromium on one core, the renderer shared it with the browser process that routes its input
 * and IPC, the network service that carries the harness's IPC bridge and the GPU process that
 * composites in software here: a view switch took 133–193 ms against 62–115 ms.
 */
function pinLikeElectron(): void {
  for (const { pid, command } of descendants(process.pid)) {
    const draws = command.includes('--type=renderer') || (command.includes('--type=zygote') && !command.includes('--no-zygote-sandbox'))
    pinToCore(draws ? LOAD_CPU : SERVER_CPU, pid)
  }
  pinToCore(SERVER_CPU, process.pid)
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


/**
 * Clicks `target` and resolves with the milliseconds, measured in the page, from the click
 * event until the frame that draws `shown`. Timing in the page leaves out what the test
 * driver adds around a click (its checks that the target is ready, its round trips).
 */
async function clickUntilShown(page: Page, target: Locator, shown: Shown): Promise<number> {
  // tsx names the functions it compiles through a `__name` helper, which the page lacks.
  await page.evaluate('globalThis.__name ??= (f) => f')
  await page.evaluate(armClickTimer, shown)
  await target.click()
  return page.evaluate(clickTimerResult)
}

/** From the open app on another view: Tokens clicked in the sidebar until the rows it reads are drawn (not those kept from the last visit). */
async function sidebarToTokens(page: Page): Promise<number> {
  const sidebar = page.getByRole('navigation', { name: 'Main' })
  await sidebar.getByRole('link', { name: 'Applications' }).click()
  await page.getByTestId('tokens-table').waitFor({ state: 'detached', ...WAIT })
  return clickUntilShown(page, sidebar.getByRole('link', { name: 'Tokens' }), { rows: TOKEN_ROW, answered: 'tokens.list' })
}

/** Clicks Audit logs in the open app's sidebar; resolves with the time, measured in the page, until the entries it read are drawn. */
function sidebarToLogs(page: Page): Promise<number> {
  return clickUntilShown(page, page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit logs' }), { rows: LOG_ROW, answered: 'logs.list' })
}

/** From the open audit log view: Applications, then Audit logs again, until the entries it read after the click are drawn. */
async function sidebarBackToLogs(page: Page): Promise<number> {
  const sidebar = page.getByRole('navigation', { name: 'Main' })
  await sidebar.getByRole('link', { name: 'Applications' }).click()
  await page.getByTestId('logs-table').waitFor({ state: 'detached', ...WAIT })
  return clickUntilShown(page, sidebar.getByRole('link', { name: 'Audit logs' }), { rows: LOG_ROW, answered: 'logs.list' })
}

/** Searches the open tokens view by `group`; resolves with the time from the click until its rows and count are drawn. */
async function filteredSearch(page: Page, group: string, expectedCount: number): Promise<number> {
  await page.getByTestId('filter-metadata').click()
  await page.getByRole('button', { name: 'Add metadata filter' }).click()
  await page.getByPlaceholder('key').fill('group')
  await page.getByPlaceholder('value').fill(group)
  await page.keyboard.press('Escape')
  return clickUntilShown(page, page.getByTestId('apply-filters'), { rows: TOKEN_ROW, rowText: `group=${group}`, pagerText: `${expectedCount.toLocaleString('en')} tokens` })
}

/** The two sidebar switches, `loads` times each, in one window after SETTLING_SWITCHES untimed rounds of them. */
async function measureSettled(browser: Browser, harness: DesktopHarness, loads: number, times: GuiTimes): Promise<void> {
  const { page } = await pageLoad(browser, harness, '/tokens', TOKEN_ROW)
  for (let round = 0; round < SETTLING_SWITCHES + loads; round++) {
    const tokens = await sidebarToTokens(page)
    const logs = await sidebarBackToLogs(page)
    if (round < SETTLING_SWITCHES) continue
    times.settledTokensFromSidebar.push(tokens)
    times.settledLogsReturn.push(logs)
  }
  await page.context().close()
}

export async function measureGui(dataDir: string, loads: number, group: string, expectedCount: number): Promise<GuiTimes> {
  await buildRenderer()
  const browser = await launchBrowser()
  const harness = await startDesktopHarness({ dataDir })
  const times: GuiTimes = { tokensPage: [], tokensFromSidebar: [], tokensFiltered: [], logsPage: [], logsFromSidebar: [], logsReturn: [], settledTokensFromSidebar: [], settledLogsReturn: [] }
  try {
    // One untimed round first: the browser's and the service's caches warm up as a user's would.
    for (let load = 0; load <= loads; load++) {
      const tokens = await pageLoad(browser, harness, '/tokens', TOKEN_ROW)
      const tokensFromSidebar = await sidebarToTokens(tokens.page)
      const filtered = await filteredSearch(tokens.page, group, expectedCount)
      const logsFromSidebar = await sidebarToLogs(tokens.page)
      const logsReturn = await sidebarBackToLogs(tokens.page)
      await tokens.page.context().close()
      const logs = await pageLoad(browser, harness, '/logs', LOG_ROW)
      await logs.page.context().close()
      if (load === 0) {
        // Laid out once the untimed round has started every process Chromium makes (its storage service comes with the first page).
        if (process.env.BENCH_GUI_PIN === '1') pinLikeElectron()
        continue
      }
      times.tokensPage.push(tokens.ms)
      times.tokensFromSidebar.push(tokensFromSidebar)
      times.tokensFiltered.push(filtered)
      times.logsPage.push(logs.ms)
      times.logsFromSidebar.push(logsFromSidebar)
      times.logsReturn.push(logsReturn)
    }
    await measureSettled(browser, harness, loads, times)
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
