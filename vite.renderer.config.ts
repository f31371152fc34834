/**
 * The renderer's Vite options, shared by electron-vite (the app) and the
 * browser tests (which build the same renderer and serve it over HTTP).
 */
import vue from '@vitejs/plugin-vue'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Plugin, UserConfig } from 'vite'

export const RENDERER_ROOT = resolve(__dirname, 'src/renderer')

/** A dependency's module patched in the renderer's build: `apply` throws if the module no longer has the code it patches. */
interface ModulePatch {
  name: string
  module: RegExp
  apply: (code: string) => string
}

/** `code` with `from` replaced by `to`; throws (failing the build) when `from` is not found, so that the patch is looked at again. */
function replaceOnce(code: string, from: string, to: string, what: string): string {
  if (!code.includes(from)) throw new Error(`${what}: ${JSON.stringify(from.split('\n')[0])} not found; the dependency has changed, check whether the patch is still needed`)
  return code.replace(from, to)
}

const DEACTIVATE = 'function deactivate() {'

/**
 * vueuc's focus trap (under every naive-ui modal, dialog and drawer) gives
 * focus back to the dialog's opener when the dialog closes, and again when the
 * dialog is taken out of the page once its leave transition has run, as it
 * never notes that it was deactivated: focus a keyboard user has moved on
 * meanwhile would be pulled back, and their next key land on the opener
 * (Enter on a row's "New key" opening its Edit form). Patched to deactivate once.
 */
const focusTrapDeactivatesOnce: ModulePatch = {
  name: 'tessera:focus-trap-deactivates-once',
  module: /[\\/]vueuc[\\/]es[\\/]focus-trap[\\/]src[\\/]index\.js$/,
  apply: (code) => replaceOnce(code, DEACTIVATE, `${DEACTIVATE}\n  if (!activated) return;\n  activated = false;`, 'vueuc focus trap')
}

const CREATE_RANGE = `function createRange(from, to) {
  const range = [];`

/**
 * naive-ui's pager lists every page between its "…" items and the ends, for
 * the menu that hovering a "…" opens, each time it is drawn with another page
 * or page count: at 10,000,000 audit entries, 500,000 options made on the
 * audit log's first visit and on each page turned, tens of milliseconds and a
 * garbage collection before the rows show. Patched to make that list when the
 * menu first reads it (the menu is made only when it opens).
 */
const pagerMenuMadeOnOpen: ModulePatch = {
  name: 'tessera:pager-menu-made-on-open',
  module: /[\\/]naive-ui[\\/]es[\\/]pagination[\\/]src[\\/]utils\.mjs$/,
  apply: (code) =>
    replaceOnce(
      code,
      CREATE_RANGE,
      `function createRange(from, to) {
  let made;
  const range = () => made ??= createRangeNow(from, to);
  return new Proxy([], {
    get: (_, key) => Reflect.get(range(), key),
    has: (_, key) => Reflect.has(range(), key),
    ownKeys: () => Reflect.ownKeys(range()),
    getOwnPropertyDescriptor: (_, key) => Reflect.getOwnPropertyDescriptor(range(), key)
  });
}
function createRangeNow(from, to) {
  const range = [];`,
      'naive-ui pagination'
    )
}

const MODULE_PATCHES = [focusTrapDeactivatesOnce, pagerMenuMadeOnOpen]

/** Applies the patches in builds, and to the dependencies Vite pre-bundles for `npm run dev`. */
function modulePatches(): { plugins: Plugin[]; prebundle: NonNullable<NonNullable<UserConfig['optimizeDeps']>['esbuildOptions']> } {
  return {
    plugins: MODULE_PATCHES.map(({ name, module, apply }) => ({ name, transform: (code, id) => (module.test(id) ? apply(code) : undefined) })),
    prebundle: {
      plugins: MODULE_PATCHES.map(({ name, module, apply }) => ({
        name,
        setup(build) {
          build.onLoad({ filter: module }, async (args) => ({ contents: apply(await readFile(args.path, 'utf8')), loader: 'js' }))
        }
      }))
    }
  }
}

export function rendererConfig(): UserConfig {
  const patches = modulePatches()
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
    plugins: [vue(), ...patches.plugins],
    optimizeDeps: { esbuildOptions: patches.prebundle },
    build: {
      // electron-vite leaves the renderer unminified by default; the window parses half the script minified.
      minify: true,
      rollupOptions: { input: { index: resolve(RENDERER_ROOT, 'index.html') } },
      chunkSizeWarningLimit: 1500
    }
  }
}
