/**
 * Headless Debian Chromium through playwright-core, with `window.tessera`
 * defined from the IPC contract over fetch to the harness (the preload's job
 * in the app), and helpers for screenshots.
 */
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { chromium, selectors, type Browser, type Page } from 'playwright-core'
import { IPC_METHODS } from '../../../src/shared/ipc'
import type { DesktopHarness } from './desktop-harness'

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
/** Without Debian's chromium the browser tests skip locally; in CI (which installs it) they must run. */
export const chromiumAvailable = existsSync(CHROMIUM_PATH) || process.env.CI === 'true'
export const SCREENSHOT_DIR = resolve(__dirname, '../../../test-results/screenshots')

// The components mark what tests look for with data-test="…".
selectors.setTestIdAttribute('data-test')

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
}

/** Same window size as the app's default (WINDOW_SIZE in electron/window.ts). */
export const VIEWPORT = { width: 1280, height: 820 }

export async function openApp(browser: Browser, harness: DesktopHarness, theme: 'light' | 'dark' = 'light'): Promise<Page> {
  const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: theme, acceptDownloads: true })
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  await page.addInitScript((methods: Record<string, readonly string[]>) => {
    const bridge: Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>> = {}
    for (const [namespace, names] of Object.entries(methods)) {
      bridge[namespace] = {}
      for (const name of names) {
        bridge[namespace][name] = (...args: unknown[]) =>
          fetch(`/__ipc/app:${namespace}.${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) }).then((r) => r.json())
      }
    }
    Object.defineProperty(globalThis, 'tessera', { value: Object.freeze(bridge) })
  }, IPC_METHODS as unknown as Record<string, readonly string[]>)
  const errors: Error[] = []
  page.on('pageerror', (error) => errors.push(error))
  pageErrors.set(page, errors)
  await page.goto(harness.url)
  return page
}

const pageErrors = new WeakMap<Page, Error[]>()

/** Uncaught errors the page has thrown so far (a test ends by expecting none). */
export function errorsOf(page: Page): string[] {
  return (pageErrors.get(page) ?? []).map((error) => error.message)
}

/** Saves `test-results/screenshots/<name>-<theme>.png`. */
export async function screenshot(page: Page, name: string, theme: 'light' | 'dark'): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${theme}.png`), animations: 'disabled' })
}

/** Goes to a view through the sidebar, as a user would. */
export async function navigate(page: Page, title: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: title }).click()
}

/** Opens a naive-ui select and picks the option with exactly this label. */
export async function chooseOption(page: Page, select: ReturnType<Page['locator']>, label: string): Promise<void> {
  await select.click()
  await page.locator('.n-base-select-option').filter({ hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).first().click()
}

/** Clicks the button of the open confirmation dialog. */
export async function confirmDialog(page: Page, label: string): Promise<void> {
  await page.locator('.n-dialog').getByRole('button', { name: label, exact: true }).click()
}
