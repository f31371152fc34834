import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { launchBrowser, navigate, openApp } from './browser'
import { startDesktopHarness, type DesktopHarness } from './desktop-harness'

/** What a workflow suite drives: filled in by the suite's `beforeAll`. */
export interface DesktopApp {
  harness: DesktopHarness
  browser: Browser
  page: Page
}

/**
 * Registers a suite's set-up and tear-down: a fresh vault behind the desktop
 * handlers, `prepare` on it (seeding), headless Chromium, and the app opened
 * on `view`.
 */
export function useDesktopApp(options: { view?: string; prepare?: (harness: DesktopHarness) => Promise<unknown>; timeoutMs?: number } = {}): DesktopApp {
  const app = {} as DesktopApp
  beforeAll(async () => {
    app.harness = await startDesktopHarness()
    await options.prepare?.(app.harness)
    app.browser = await launchBrowser()
    app.page = await openApp(app.browser, app.harness)
    if (options.view) await navigate(app.page, options.view)
  }, options.timeoutMs)
  afterAll(async () => {
    await app.browser?.close()
    await app.harness?.stop()
  })
  return app
}
