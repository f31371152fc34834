/**
 * Headless Debian Chromium through playwright-core, with `window.tessera`
 * defined from the IPC contract over fetch to the harness (the preload's job
 * in the app), and helpers for screenshots.
 */
import { existsSync } from 'node:fs'
import { copyFile, mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { chromium, selectors, type Browser, type Page } from 'playwright-core'
import { IPC_METHODS } from '../../../src/shared/ipc'
import type { DesktopHarness } from './desktop-harness'

const DEBIAN_CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? DEBIAN_CHROMIUM

/**
 * Why the browser tests will be skipped, as one line, or undefined when they
 * run: without Chromium they skip locally; in CI (which installs it) they must
 * run, and fail if it is missing.
 */
export function chromiumMissingNotice(env: NodeJS.ProcessEnv = process.env, exists: (path: string) => boolean = existsSync): string | undefined {
  const path = env.CHROMIUM_PATH ?? DEBIAN_CHROMIUM
  if (env.CI === 'true' || exists(path)) return undefined
  return `Browser tests skipped: Chromium was not found at ${path}. Install it with \`sudo apt-get install chromium\`, or set CHROMIUM_PATH to a Chromium or Chrome binary.`
}

export const chromiumAvailable = chromiumMissingNotice() === undefined
export const SCREENSHOT_DIR = resolve(__dirname, '../../../test-results/screenshots')
/** The pictures of the docs, rewritten only when the run asks for it (`npm run docs:screenshots`). */
export const DOCS_IMAGES_DIR = resolve(__dirname, '../../../docs/images')
export const UPDATE_DOCS_IMAGES = process.env.UPDATE_SCREENSHOTS === '1'

// The components mark what tests look for with data-test="…".
selectors.setTestIdAttribute('data-test')

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
}

/** A 1280×800 screen: the app's default window (WINDOW_SIZE in electron/window.ts) less its title bar. */
export const VIEWPORT = { width: 1280, height: 800 }

/**
 * Opens the app in a fresh browser context, on `path` (a route such as `/logs`) or the default view;
 * `beforeLoad` runs on the page before the app loads (to route its requests, for instance).
 */
export async function openApp(browser: Browser, harness: DesktopHarness, theme: 'light' | 'dark' = 'light', path = '/', beforeLoad?: (page: Page) => Promise<void>): Promise<Page> {
  const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: theme, acceptDownloads: true })
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  await beforeLoad?.(page)
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
  await page.goto(`${harness.url}#${path}`)
  // The app mounts once its first view's chunk has loaded, which may be after the load event.
  await page.locator('#app > *').first().waitFor({ state: 'attached' })
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

/** A documented picture: saved like `screenshot`, and as `docs/images/desktop-<name>-<theme>.png` when the run updates the docs. */
export async function docsScreenshot(page: Page, name: string, theme: 'light' | 'dark'): Promise<void> {
  await screenshot(page, name, theme)
  if (UPDATE_DOCS_IMAGES) await copyFile(join(SCREENSHOT_DIR, `${name}-${theme}.png`), join(DOCS_IMAGES_DIR, `desktop-${name}-${theme}.png`))
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

/**
 * Waits for a toast saying `text`, as long as the page's other waits (10 s): it
 * comes once the action has finished, and a save of the port, link URL or SMTP
 * restarts the REST service first, which on a busy machine takes well over a second.
 */
export async function expectNotification(page: Page, text: string): Promise<void> {
  await page.locator('.n-notification', { hasText: text }).first().waitFor()
}

/** Clicks the button of the open confirmation dialog. */
export async function confirmDialog(page: Page, label: string): Promise<void> {
  await page.locator('.n-dialog').getByRole('button', { name: label, exact: true }).click()
}
