/**
 * Production `dependencies` hold exactly what the app loads at run time: the
 * main process and the CLI load them from node_modules (electron-vite keeps
 * them external), so a missing one breaks the packaged app and a superfluous
 * one ships for nothing. The renderer is bundled, so its libraries are
 * devDependencies.
 */
import { builtinModules } from 'node:module'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> }

/** Loaded at run time without an import in our code. */
const LOADED_INDIRECTLY: Record<string, string> = { sqlite3: "knex's `client: 'sqlite3'` requires it" }
/** Imported by the main process yet not a dependency: provided by the runtime. */
const PROVIDED_BY_RUNTIME = new Set(['electron'])

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.(ts|mts|cts|cjs|mjs|js)$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** Packages a file loads at run time (type-only imports are erased, so they do not count). */
function packagesLoadedBy(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const specifiers = [
    ...[...text.matchAll(/^\s*import\s+(?!type\s)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)].map((m) => m[1]),
    ...[...text.matchAll(/^\s*export\s+(?!type\s)[^'"]*?\sfrom\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]),
    ...[...text.matchAll(/(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1])
  ]
  return specifiers
    .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:') && !builtinModules.includes(specifier.split('/')[0]))
    .map((specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/'))
}

/** Everything that runs outside the renderer bundle: main process, preload, shared code, migrations, the CLI launcher. */
const RUNTIME_FILES = ['src/main', 'src/preload', 'src/shared', 'db', 'bin'].flatMap((dir) => sourceFiles(join(ROOT, dir)))
const loaded = new Map<string, string[]>()
for (const file of RUNTIME_FILES) {
  for (const name of packagesLoadedBy(file)) loaded.set(name, [...(loaded.get(name) ?? []), relative(ROOT, file)])
}

describe('package.json dependencies', () => {
  it('lists only packages the main process, the CLI or the migrations load', () => {
    const unused = Object.keys(pkg.dependencies).filter((name) => !loaded.has(name) && !(name in LOADED_INDIRECTLY))
    expect(unused).toEqual([])
  })

  it('lists every package the main process, the CLI or the migrations load', () => {
    const missing = [...loaded.keys()].filter((name) => !(name in pkg.dependencies) && !PROVIDED_BY_RUNTIME.has(name))
    expect(Object.fromEntries(missing.map((name) => [name, loaded.get(name)]))).toEqual({})
  })

  it('sees the imports it checks (a broken scan would pass the tests above vacuously)', () => {
    expect(loaded.get('koa')).toContain('src/main/server/app.ts')
    expect(loaded.get('tsx')).toContain('bin/tessera.cjs')
    expect(loaded.has('vue')).toBe(false)
  })
})
