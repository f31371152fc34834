/**
 * A second ceiling for the HTTP figures: bare Koa (bench/bare-koa.ts) that
 * also does the durable minimum an audited request must do before it is
 * answered — a read commits one audit row, a create its token row and an
 * audit row — the best way `sqlite3` allows: group commit (the requests that
 * arrive while a commit runs share the next one), each batch one script of
 * multi-row INSERTs in one call, in WAL mode with `synchronous = FULL` as the
 * service commits. No authentication, validation, crypto, audit chain or
 * counters. Run as a child of bench/run.ts:
 *
 *   node bin/run-ts.cjs bench/durable-koa.ts [database file]
 *
 * Without a file it works in a temporary directory, removed on exit.
 */
import Router from '@koa/router'
import parse from 'co-body'
import Koa from 'koa'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import sqlite3 from 'sqlite3'
import { sqlLiteral } from '../src/main/storage/sql-script'

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS tokens (tenant_key INTEGER NOT NULL, id TEXT NOT NULL, data BLOB NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (tenant_key, id));
  CREATE INDEX IF NOT EXISTS tokens_by_time ON tokens (tenant_key, created_at);
  CREATE TABLE IF NOT EXISTS logs (seq INTEGER PRIMARY KEY, tenant_key INTEGER NOT NULL, entity_type TEXT NOT NULL, entity_id TEXT NOT NULL, operation TEXT NOT NULL, created_at INTEGER NOT NULL, mac BLOB NOT NULL);
  CREATE INDEX IF NOT EXISTS logs_by_time ON logs (tenant_key, created_at);
  CREATE INDEX IF NOT EXISTS logs_by_type ON logs (tenant_key, entity_type, created_at);`

/** Where an audit entry's 32-byte MAC would go. */
const MAC = sqlLiteral(new Uint8Array(32))

/** The rows one request commits, as SQL tuples. */
interface Pending {
  tokens: string[]
  logs: string[]
  committed: (error?: Error) => void
}

class GroupCommit {
  private queue: Pending[] = []
  private running = false

  constructor(private readonly db: sqlite3.Database) {}

  /** Resolves once the rows are committed. */
  write(tokens: string[], logs: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ tokens, logs, committed: (error) => (error ? reject(error) : resolve()) })
      void this.drain()
    })
  }

  private async drain(): Promise<void> {
    if (this.running) return
    this.running = true
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      const tokens = batch.flatMap((pending) => pending.tokens)
      const logs = batch.flatMap((pending) => pending.logs)
      const script = [
        'BEGIN IMMEDIATE;',
        tokens.length ? `INSERT INTO tokens (tenant_key, id, data, created_at) VALUES ${tokens.join(',')};` : '',
        `INSERT INTO logs (tenant_key, entity_type, entity_id, operation, created_at, mac) VALUES ${logs.join(',')};`,
        'COMMIT;'
      ].join('')
      const error = await new Promise<Error | null>((resolve) => this.db.exec(script, resolve))
      if (error) await new Promise((resolve) => this.db.exec('ROLLBACK;', resolve))
      for (const pending of batch) pending.committed(error ?? undefined)
    }
    this.running = false
  }
}

const logRow = (entityId: string, operation: string, now: number) => `(1,'token',${sqlLiteral(entityId)},'${operation}',${now},${MAC})`

function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (error) => (error ? reject(error) : resolve())))
}

async function main(): Promise<void> {
  const file = process.argv[2] ?? join(mkdtempSync(join(tmpdir(), 'tessera-durable-koa-')), 'ceiling.db')
  const db = new sqlite3.Database(file)
  await exec(db, 'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;' + SCHEMA)
  const writes = new GroupCommit(db)
  // Time-ordered ids, as the service's: new rows land at the end of the primary key.
  let nextId = 0
  const newId = () => `${Date.now().toString(16)}-${(nextId++).toString(16).padStart(8, '0')}`

  const app = new Koa()
  const router = new Router()
  router.post('/tokens', async (ctx) => {
    const body = (await parse.json(ctx, { limit: 5 * 1024 * 1024, strict: false })) as { data?: unknown }
    const id = newId()
    const now = Date.now()
    const data = Buffer.from(JSON.stringify(body.data ?? null))
    await writes.write([`(1,${sqlLiteral(id)},${sqlLiteral(data)},${now})`], [logRow(id, 'create', now)])
    ctx.status = 201
    ctx.body = { id, type: 'token', received: typeof body.data }
  })
  router.get('/tokens/:id', async (ctx) => {
    await writes.write([], [logRow(ctx.params.id, 'read', Date.now())])
    ctx.body = { id: ctx.params.id, type: 'card', data: { number: 'XXXXXXXXXXXX4242' } }
  })
  app.use(router.routes())
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number }
    process.stdout.write(`Durable Koa listening on http://127.0.0.1:${address.port}\n`)
  })
  process.on('SIGTERM', () =>
    server.close(() =>
      db.close(() => {
        if (process.argv[2] === undefined) rmSync(dirname(file), { recursive: true, force: true })
        process.exit(0)
      })
    )
  )
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
