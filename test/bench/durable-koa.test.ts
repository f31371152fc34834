import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import sqlite3 from 'sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase } from '../helpers/postgres'

const ROOT = join(__dirname, '..', '..')

/** Where the ceiling commits: its command-line argument, how to count its rows from a connection of our own, and how to clean up. */
interface CeilingDatabase {
  target: string
  count(sql: string): Promise<number>
  remove(): Promise<void>
}

function sqliteDatabase(): CeilingDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'durable-koa-test-'))
  const file = join(dir, 'ceiling.db')
  return {
    target: file,
    count: (sql) => {
      const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY)
      return new Promise((resolve, reject) => db.get(sql, (error, row: { n: number }) => db.close(() => (error ? reject(error) : resolve(row.n)))))
    },
    remove: async () => rmSync(dir, { recursive: true, force: true })
  }
}

async function postgresDatabase(): Promise<CeilingDatabase> {
  const database = await createTestDatabase()
  return {
    target: database.url,
    count: async (sql) => {
      const client = new pg.Client({ connectionString: database.url })
      await client.connect()
      try {
        return Number((await client.query(sql)).rows[0].n)
      } finally {
        await client.end()
      }
    },
    remove: database.drop
  }
}

describe.each([
  ['SQLite', async () => sqliteDatabase()],
  ['PostgreSQL', postgresDatabase]
])('the durable Koa ceiling (bench/durable-koa.ts) on %s', { timeout: 30_000 }, (_engine, openDatabase) => {
  let database: CeilingDatabase
  let child: ChildProcess
  let url: string

  beforeAll(async () => {
    database = await openDatabase()
    child = spawn(process.execPath, ['bin/run-ts.cjs', 'bench/durable-koa.ts', database.target], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
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
    await database.remove()
  })

  it('answers a create only once its token row and audit row are committed', async () => {
    const response = await fetch(`${url}/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: 'x'.repeat(100) }) })
    expect(response.status).toBe(201)
    const { id } = (await response.json()) as { id: string }
    expect(await database.count(`SELECT count(*) AS n FROM tokens WHERE id = '${id}'`)).toBe(1)
    expect(await database.count(`SELECT count(*) AS n FROM logs WHERE entity_id = '${id}' AND operation = 'create'`)).toBe(1)
  })

  it('commits one audit row per read, for concurrent reads and for ids holding quotes', async () => {
    const ids = Array.from({ length: 40 }, (_, n) => `card-${n}'s`)
    const responses = await Promise.all(ids.map((id) => fetch(`${url}/tokens/${encodeURIComponent(id)}`)))
    expect(responses.map((response) => response.status)).toEqual(ids.map(() => 200))
    expect(await database.count("SELECT count(*) AS n FROM logs WHERE operation = 'read' AND entity_id LIKE 'card-%''s'")).toBe(ids.length)
  })
})
