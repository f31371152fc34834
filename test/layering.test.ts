/**
 * DESIGN §1 layering, checked on the source text so it holds even where lint
 * is not run: only the Electron glue imports `electron`, and the renderer
 * never imports main-process or preload code.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
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

describe('layering', () => {
  it('lets only src/main/electron and src/main/index.ts import electron', () => {
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
