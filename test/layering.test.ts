/**
 * The layering of src/main (docs/architecture.md), checked on the source text
 * so it holds even where lint is not run: which folder may import which, only
 * the Electron glue imports `electron`, only storage/ imports knex and only
 * crypto/ libsodium, the renderer reaches the main process only through the
 * typed bridge, and migrations stand alone.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.(ts|vue|mts|cts)$/.test(name) ? [relative(ROOT, path)] : []
  })
}

const importsOf = (file: string) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(/(?:from\s+|import\s*\(|require\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1])

/** Imports that load code at run time (`import type` is erased), as written. */
const runtimeImportsOf = (file: string) =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^\s*(import|export)\s+(?!type\s)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)].map((m) => m[2])

/** With `type ` in front of type-only ones, for the renderer's check. */
function typedImports(file: string): string[] {
  return [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^\s*import\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((match) => `${match[1] ? 'type ' : ''}${match[2]}`)
}

/** The folder of src/main a file or import lands in (`index.ts` counts as the Electron glue). */
function layerOf(path: string): string | undefined {
  const inMain = relative(join(ROOT, 'src/main'), path)
  if (inMain.startsWith('..')) return relative(ROOT, path).startsWith('src/shared') ? 'shared' : undefined
  return inMain === 'index.ts' ? 'electron' : inMain.split('/')[0]
}

/** What each folder of src/main may import at run time (besides itself and src/shared). */
const ALLOWED: Record<string, string[]> = {
  domain: [],
  crypto: [],
  infra: [],
  storage: [],
  app: ['domain', 'storage', 'crypto', 'infra'],
  bootstrap: ['app', 'domain', 'storage', 'crypto', 'infra', 'server'],
  server: ['app', 'bootstrap', 'infra'],
  desktop: ['app', 'bootstrap', 'infra'],
  cli: ['app', 'bootstrap', 'infra'],
  electron: ['desktop', 'app', 'bootstrap', 'infra']
}

describe('layering', () => {
  it('lets each folder of src/main import only the layers below it, and no door another door', () => {
    const offenders = sourceFiles(join(ROOT, 'src/main')).flatMap((file) => {
      const from = layerOf(join(ROOT, file))!
      return runtimeImportsOf(file)
        .filter((source) => source.startsWith('.'))
        .map((source) => layerOf(resolve(ROOT, dirname(file), source)))
        .filter((to) => to !== undefined && to !== from && to !== 'shared' && !ALLOWED[from].includes(to))
        .map((to) => `${file} → ${to}`)
    })
    expect(offenders).toEqual([])
  })

  it('keeps every folder of src/main in the table above', () => {
    expect(readdirSync(join(ROOT, 'src/main')).filter((name) => !name.includes('.')).sort()).toEqual(Object.keys(ALLOWED).sort())
  })

  it('lets only storage/ import knex and sqlite3 (infra/ locks the vault with a bare sqlite3 file), and only crypto/ libsodium', () => {
    const files = sourceFiles(join(ROOT, 'src'))
    const using = (pattern: RegExp) => files.filter((file) => importsOf(file).some((source) => pattern.test(source)))
    expect(using(/^knex$/).filter((file) => !file.startsWith('src/main/storage/'))).toEqual([])
    expect(using(/^sqlite3$/).filter((file) => !file.startsWith('src/main/storage/') && file !== 'src/main/infra/vault-lock.ts')).toEqual([])
    expect(using(/^libsodium-wrappers$/)).toEqual(['src/main/crypto/sodium.ts'])
  })

  it('lets only src/main/electron, src/main/index.ts and the preload import electron', () => {
    const offenders = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'db'))].filter(
      (file) => !/^src\/main\/(electron\/|index\.ts$)/.test(file) && !file.startsWith('src/preload/') && importsOf(file).includes('electron')
    )
    expect(offenders).toEqual([])
  })

  it('keeps the renderer away from main-process and preload code', () => {
    const offenders = sourceFiles(join(ROOT, 'src/renderer')).filter((file) =>
      importsOf(file).some((source) => source === 'electron' || /(^|\/)(main|preload)\//.test(source))
    )
    expect(offenders).toEqual([])
  })

  it('keeps the renderer to its own code, browser libraries and type-only imports from src/shared (plus the pure permission, token-rule and pagination modules)', () => {
    const forbidden = (spec: string) => {
      const typeOnly = spec.startsWith('type ')
      const target = spec.replace(/^type /, '')
      if (target.startsWith('@shared/')) return !typeOnly && !['@shared/permissions', '@shared/token-rules', '@shared/pagination'].includes(target)
      return /^node:|^electron$/.test(target) || target.includes('/main/')
    }
    const offenders = sourceFiles(join(ROOT, 'src/renderer')).flatMap((file) =>
      typedImports(file)
        .filter(forbidden)
        .map((spec) => `${file}: ${spec}`)
    )
    expect(offenders).toEqual([])
  })

  it('never lets a component call window.tessera: only the api/ module does', () => {
    const offenders = sourceFiles(join(ROOT, 'src/renderer/src')).filter((file) => !file.includes('/api/') && readFileSync(join(ROOT, file), 'utf8').includes('window.tessera'))
    expect(offenders).toEqual([])
  })

  it('keeps the contracts to zod, email-addresses and src/shared, so the renderer can import them', () => {
    const offenders = sourceFiles(join(ROOT, 'src/shared/contracts')).filter((file) =>
      importsOf(file).some((source) => source !== 'zod' && source !== 'email-addresses' && !source.startsWith('./') && !/^\.\.\/[^.]/.test(source))
    )
    expect(offenders).toEqual([])
  })

  it('keeps migrations self-contained', () => {
    const offenders = sourceFiles(join(ROOT, 'db/migrations')).filter((file) => importsOf(file).some((source) => source.includes('src/')))
    expect(offenders).toEqual([])
  })
})
