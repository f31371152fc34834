/**
 * Builds the renderer once for the browser tests, with the same Vite options
 * as the app (vite.renderer.config.ts), into out/e2e-renderer.
 */
import { resolve } from 'node:path'
import { build, mergeConfig } from 'vite'
import { rendererConfig } from '../../vite.renderer.config'

export const E2E_RENDERER_DIR = resolve(__dirname, '../../out/e2e-renderer')

export default async function setup(): Promise<void> {
  await build(
    mergeConfig(rendererConfig(), {
      configFile: false,
      logLevel: 'warn',
      build: { outDir: E2E_RENDERER_DIR, emptyOutDir: true, reportCompressedSize: false, minify: false }
    })
  )
}
