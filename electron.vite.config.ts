/**
 * Three builds (electron-vite): main (Node; `dependencies` stay external so the
 * native sqlite3 addon and friends load from node_modules), the preload
 * (CommonJS: sandboxed preloads cannot be ES modules) and the Vue renderer.
 */
import { defineConfig } from 'electron-vite'
import { resolve } from 'node:path'
import { rendererConfig } from './vite.renderer.config'

export default defineConfig({
  main: {
    build: {
      externalizeDeps: true,
      rollupOptions: { input: { index: resolve(__dirname, 'src/main/index.ts') } }
    }
  },
  preload: {
    build: {
      // The preload imports only `electron` and the shared contract: bundle it into one file.
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve(__dirname, 'src/preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' }
      }
    }
  },
  renderer: rendererConfig()
})
