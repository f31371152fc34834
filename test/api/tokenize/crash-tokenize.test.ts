/**
 * A server killed with SIGKILL in the middle of bulk tokenization: the vault
 * opens again at once, every acknowledged token is there, and no request is
 * half applied (each /tokenize is all or nothing).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TOKENIZE_MAX_TOKENS } from '../../../src/shared/token-rules'
import { run, serve, terminate, type Served } from '../../helpers/cli'

const VALUES_PER_REQUEST = TOKENIZE_MAX_TOKENS
const CONCURRENT_REQUESTS = 4

async function call<T>(server: Served, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(server.url + path, {
    method,
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as T }
}

describe('tessera serve killed with SIGKILL during bulk tokenize', { timeout: 120_000 }, () => {
  let root: string
  let dataDir: string
  let adminKey: string

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-crash-'))
    dataDir = join(root, 'vault')
    adminKey = JSON.parse((await run(['init', '--data-dir', dataDir, '--json'])).stdout).application.key
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('keeps every acknowledged token and applies no request in part', async () => {
    let server = await serve(dataDir)
    const app = await call<{ key: string }>(server, adminKey, 'POST', '/applications', {
      name: 'bulk loader',
      type: 'private',
      permissions: ['token:create', 'token:read']
    })
    const acknowledged: string[] = []
    let round = 0
    // Requests keep coming until the server dies; those answered before the kill must survive it.
    const load = async (): Promise<void> => {
      for (;;) {
        const values = Array.from({ length: VALUES_PER_REQUEST }, (_, i) => `value-${round++}-${i}`)
        const answered = await call<string[]>(server, app.body.key, 'POST', '/tokenize', values).catch(() => undefined)
        if (!answered) return
        expect(answered.status).toBe(200)
        acknowledged.push(...answered.body)
      }
    }
    const loaders = Array.from({ length: CONCURRENT_REQUESTS }, load)
    while (acknowledged.length < 2 * VALUES_PER_REQUEST) await new Promise((resolve) => setTimeout(resolve, 10))
    server.child.kill('SIGKILL')
    await Promise.all(loaders)
    expect((await server.finished).signal).toBe('SIGKILL')

    server = await serve(dataDir)
    const page = await call<{ pagination: { total_items: number } }>(server, app.body.key, 'GET', '/tokens?size=1')
    expect(page.status).toBe(200)
    expect(page.body.pagination.total_items).toBeGreaterThanOrEqual(acknowledged.length)
    expect(page.body.pagination.total_items % VALUES_PER_REQUEST).toBe(0)
    for (let i = 0; i < acknowledged.length; i += 100) {
      const ids = acknowledged.slice(i, i + 100)
      const found = await call<{ pagination: { total_items: number } }>(server, app.body.key, 'GET', `/tokens?size=1&${ids.map((id) => `id=${id}`).join('&')}`)
      expect(found.body.pagination.total_items).toBe(ids.length)
    }
    expect((await terminate(server)).code).toBe(0)
  })
})
