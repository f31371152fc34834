import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sqlite3 from 'sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = join(__dirname, '..', '..')

/** Rows the ceiling's database holds, read through a connection of its own while the server runs. */
function count(file: string, sql: string): Promise<number> {
  const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY)
  return new Promise((resolve, reject) =>
    db.get(sql, (error, row: { n: number }) => db.close(() => (error ? reject(error) : resolve(row.n))))
  )
}

describe('the durable Koa ceiling (bench/durable-koa.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'durable-koa-test-'))
  const file = join(dir, 'ceiling.db')
  let child: ChildProcess
  let url: string

  beforeAll(async () => {
    child = spawn(process.execPath, ['bin/run-ts.cjs', 'bench/durable-koa.ts', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
    url = await new Promise((resolve, reject) => {
      let output = ''
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString()
        const match = /listening on (http:\/\/\S+)/.exec(output)
        if (match) resolve(match[1])
      })
      child.once('exit', (code) => reject(new Error(`exited with ${code}`)))
    })
  })

  afterAll(async () => {
    child.removeAllListeners('exit')
    await new Promise((resolve) => {
      child.once('exit', resolve)
      child.kill('SIGTERM')
    })
    rmSync(dir, { recursive: true, force: true })
  })

  it('answers a create only once its token row and audit row are committed', async () => {
    const response = await fetch(`${url}/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: 'x'.repeat(100) }) })
    expect(response.status).toBe(201)
    const { id } = (await response.json()) as { id: string }
    expect(await count(file, `SELECT count(*) AS n FROM tokens WHERE id = '${id}'`)).toBe(1)
    expect(await count(file, `SELECT count(*) AS n FROM logs WHERE entity_id = '${id}' AND operation = 'create'`)).toBe(1)
  })

  it('commits one audit row per read, for concurrent reads and for ids holding quotes', async () => {
    const ids = Array.from({ length: 40 }, (_, n) => `card-${n}'s`)
    const responses = await Promise.all(ids.map((id) => fetch(`${url}/tokens/${encodeURIComponent(id)}`)))
    expect(responses.map((response) => response.status)).toEqual(ids.map(() => 200))
    expect(await count(file, "SELECT count(*) AS n FROM logs WHERE operation = 'read' AND entity_id LIKE 'card-%''s'")).toBe(ids.length)
  })
})
