/**
 * The renderer's Vite options, shared by electron-vite (the app) and the
 * browser tests (which build the same renderer and serve it over HTTP).
 */
import vue from '@vitejs/plugin-vue'
import { resolve } from 'node:path'
import type { UserConfig } from 'vite'

export const RENDERER_ROOT = resolve(__dirname, 'src/renderer')

export function rendererConfig(): UserConfig {
  return {
    root: RENDERER_ROOT,
    // Relative asset URLs: the app loads index.html from file:// in production.
    base: './',
    resolve: {
      alias: {
        '@renderer': resolve(RENDERER_ROOT, 'src'),
        '@shared': resolve(__dirname, 'src/shared')
      }
    },
    plugins: [vue()],
    build: {
      // electron-vite leaves the renderer unminified by default; the window parses half the script minified.
      minify: true,
      rollupOptions: { input: { index: resolve(RENDERER_ROOT, 'index.html') } },
      chunkSizeWarningLimit: 1500
    }
  }
}
