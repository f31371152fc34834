/**
 * Builds the renderer once for the browser tests, with the same Vite options
 * as the app (vite.renderer.config.ts), into out/e2e-renderer; or, when they
 * will be skipped for want of Chromium, says so in one line instead.
 */
import { resolve } from 'node:path'
import { build, mergeConfig } from 'vite'
import { rendererConfig } from '../../vite.renderer.config'
import { chromiumMissingNotice } from './support/browser'

export const E2E_RENDERER_DIR = resolve(__dirname, '../../out/e2e-renderer')

export default async function setup(): Promise<void> {
  const notice = chromiumMissingNotice()
  if (notice) {
    console.warn(notice)
    return
  }
  await build(
    mergeConfig(rendererConfig(), {
      configFile: false,
      logLevel: 'warn',
      build: { outDir: E2E_RENDERER_DIR, emptyOutDir: true, reportCompressedSize: false }
    })
  )
}
