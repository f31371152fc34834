/**
 * The renderer's Vite options, shared by electron-vite (the app) and the
 * browser tests (which build the same renderer and serve it over HTTP).
 */
import vue from '@vitejs/plugin-vue'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Plugin, UserConfig } from 'vite'

export const RENDERER_ROOT = resolve(__dirname, 'src/renderer')

/** vueuc's focus trap, under every naive-ui modal, dialog and drawer. */
const FOCUS_TRAP_MODULE = /[\\/]vueuc[\\/]es[\\/]focus-trap[\\/]src[\\/]index\.js$/
const DEACTIVATE = 'function deactivate() {'

/**
 * vueuc's focus trap gives focus back to the dialog's opener when the dialog
 * closes, and again when the dialog is taken out of the page once its leave
 * transition has run, as it never notes that it was deactivated: focus a
 * keyboard user has moved on meanwhile would be pulled back, and their next
 * key land on the opener (Enter on a row's "New key" opening its Edit form).
 * Patched to deactivate once; the build fails if vueuc has changed, so that
 * the patch is looked at again.
 */
function deactivateFocusTrapOnce(code: string): string {
  if (!code.includes(DEACTIVATE)) throw new Error('vueuc focus trap: deactivate() not found; check whether it still returns focus twice')
  return code.replace(DEACTIVATE, `${DEACTIVATE}\n  if (!activated) return;\n  activated = false;`)
}

/** Applies `deactivateFocusTrapOnce` in builds, and to the dependencies Vite pre-bundles for `npm run dev`. */
function focusTrapPatch(): { plugin: Plugin; prebundle: NonNullable<NonNullable<UserConfig['optimizeDeps']>['esbuildOptions']> } {
  return {
    plugin: {
      name: 'tessera:focus-trap-deactivates-once',
      transform: (code, id) => (FOCUS_TRAP_MODULE.test(id) ? deactivateFocusTrapOnce(code) : undefined)
    },
    prebundle: {
      plugins: [
        {
          name: 'tessera:focus-trap-deactivates-once',
          setup(build) {
            build.onLoad({ filter: FOCUS_TRAP_MODULE }, async (args) => ({ contents: deactivateFocusTrapOnce(await readFile(args.path, 'utf8')), loader: 'js' }))
          }
        }
      ]
    }
  }
}

export function rendererConfig(): UserConfig {
  const focusTrap = focusTrapPatch()
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
    plugins: [vue(), focusTrap.plugin],
    optimizeDeps: { esbuildOptions: focusTrap.prebundle },
    build: {
      // electron-vite leaves the renderer unminified by default; the window parses half the script minified.
      minify: true,
      rollupOptions: { input: { index: resolve(RENDERER_ROOT, 'index.html') } },
      chunkSizeWarningLimit: 1500
    }
  }
}
