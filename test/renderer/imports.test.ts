/**
 * The renderer's modules import one another without cycles: a store that
 * imports a store importing it back reads `undefined` at start-up depending
 * on which loads first. Checked on the source text, type imports included.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(__dirname, '../..')
const RENDERER = join(ROOT, 'src/renderer/src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.(ts|vue)$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** The renderer file an import names, or undefined for packages and src/shared. */
function resolveImport(from: string, source: string): string | undefined {
  const base = source.startsWith('@renderer/') ? join(RENDERER, source.slice('@renderer/'.length)) : source.startsWith('.') ? resolve(dirname(from), source) : undefined
  if (!base) return undefined
  return [base, `${base}.ts`, `${base}.vue`, join(base, 'index.ts')].find((path) => existsSync(path) && statSync(path).isFile())
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(RENDERER)) {
    const sources = [...readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\s*\(|import\s+)['"]([^'"]+)['"]/g)].map((match) => match[1])
    graph.set(
      file,
      sources.map((source) => resolveImport(file, source)).filter((path): path is string => path !== undefined)
    )
  }
  return graph
}

/** Every cycle found by a depth-first walk, each as `a → b → a` relative to the renderer. */
function cycles(graph: Map<string, string[]>): string[] {
  const found: string[] = []
  const done = new Set<string>()
  const walk = (file: string, path: string[]): void => {
    const at = path.indexOf(file)
    if (at >= 0) {
      found.push([...path.slice(at), file].map((entry) => relative(RENDERER, entry)).join(' → '))
      return
    }
    if (done.has(file)) return
    for (const next of graph.get(file) ?? []) walk(next, [...path, file])
    done.add(file)
  }
  for (const file of graph.keys()) walk(file, [])
  return found
}

describe('renderer imports', () => {
  it('resolve to files the check can follow', () => {
    const graph = importGraph()
    expect(graph.get(join(RENDERER, 'stores/vault.ts'))).toContain(join(RENDERER, 'stores/notifications.ts'))
  })

  it('form no cycle, the notifications and vault stores included', () => {
    expect(cycles(importGraph())).toEqual([])
  })

  it('would find a cycle if there were one', () => {
    const a = join(RENDERER, 'a.ts')
    const b = join(RENDERER, 'b.ts')
    expect(cycles(new Map([[a, [b]], [b, [a]]]))).toEqual(['a.ts → b.ts → a.ts'])
  })
})
