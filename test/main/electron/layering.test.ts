import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(__dirname, '../../..')

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return /\.(ts|vue)$/.test(name) ? [path] : []
  })
}

function imports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^\s*import\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((match) => `${match[1] ? 'type ' : ''}${match[2]}`)
}

describe('layering (DESIGN §1)', () => {
  it('imports electron only from src/main/electron/, src/main/index.ts and the preload', () => {
    const offenders = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'db'))]
      .filter((file) => imports(file).some((spec) => spec === 'electron' || spec === 'type electron'))
      .map((file) => relative(ROOT, file))
      .filter((file) => !file.startsWith('src/main/electron/') && file !== 'src/main/index.ts' && !file.startsWith('src/preload/'))
    expect(offenders).toEqual([])
  })

  it('keeps the renderer to its own code, browser libraries and type-only imports from src/shared (plus the pure permission and token-rule modules)', () => {
    const forbidden = (spec: string) => {
      const typeOnly = spec.startsWith('type ')
      const target = spec.replace(/^type /, '')
      if (target.startsWith('@shared/')) return !typeOnly && target !== '@shared/permissions' && target !== '@shared/token-rules'
      return /^node:|^electron$/.test(target) || target.includes('/main/')
    }
    const offenders = sources(join(ROOT, 'src/renderer')).flatMap((file) =>
      imports(file)
        .filter(forbidden)
        .map((spec) => `${relative(ROOT, file)}: ${spec}`)
    )
    expect(offenders).toEqual([])
  })

  it('never lets a component call window.tessera: only the api/ module does', () => {
    const offenders = sources(join(ROOT, 'src/renderer/src'))
      .filter((file) => !file.includes('/api/') && readFileSync(file, 'utf8').includes('window.tessera'))
      .map((file) => relative(ROOT, file))
    expect(offenders).toEqual([])
  })
})
