/**
 * A second ceiling for the HTTP figures: bare Koa (bench/koa-ceiling.ts) that
 * also does the durable minimum an audited request must do before it is
 * answered — a read commits one audit row, a create its token row and an
 * audit row — the best way the driver allows: group commit (the requests that
 * arrive while a commit runs share the next one), each batch in one call. On
 * SQLite, one script of multi-row INSERTs (the service's runInsertScript) in WAL
 * mode with `synchronous = FULL` as the service commits; on PostgreSQL, one
 * round trip of prepared `unnest` inserts between BEGIN and COMMIT (the
 * service's runPostgresBatch), each audit row numbered by the process as the
 * service numbers its chain. No authentication, validation, crypto, audit
 * chain or counters. Run as a child of bench/run.ts or bench/cpu.ts:
 *
 *   node bin/run-ts.cjs bench/durable-koa.ts [database file | postgres://… URL of an empty database]
 *
 * Without an argument it works on SQLite in a temporary directory, removed on exit.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import pg from 'pg'
import sqlite3 from 'sqlite3'
import { runPostgresBatch } from '../src/main/storage/postgres-batch'
import { runInsertScript, type InsertStatement } from '../src/main/storage/sql-script'
import { serveKoaCeiling } from './koa-ceiling'

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS tokens (tenant_key INTEGER NOT NULL, id TEXT NOT NULL, data BLOB NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (tenant_key, id));
  CREATE INDEX IF NOT EXISTS tokens_by_time ON tokens (tenant_key, created_at);
  CREATE TABLE IF NOT EXISTS logs (seq INTEGER PRIMARY KEY, tenant_key INTEGER NOT NULL, entity_type TEXT NOT NULL, entity_id TEXT NOT NULL, operation TEXT NOT NULL, created_at INTEGER NOT NULL, mac BLOB NOT NULL);
  CREATE INDEX IF NOT EXISTS logs_by_time ON logs (tenant_key, created_at);
  CREATE INDEX IF NOT EXISTS logs_by_type ON logs (tenant_key, entity_type, created_at);`

/** The same tables in PostgreSQL's types. */
const POSTGRES_SCHEMA = SCHEMA.replaceAll('BLOB', 'BYTEA').replaceAll('created_at INTEGER', 'created_at BIGINT').replace('seq INTEGER', 'seq BIGINT')

const TOKEN_COLUMNS = ['tenant_key', 'id', 'data', 'created_at']
const LOG_COLUMNS = ['tenant_key', 'entity_type', 'entity_id', 'operation', 'created_at', 'mac']
/** SQLite numbers the rows itself (`INTEGER PRIMARY KEY`); on PostgreSQL the process does, as the service numbers its audit chain. */
const NUMBERED_LOG_COLUMNS = ['seq', ...LOG_COLUMNS]
/** Where an audit entry's 32-byte MAC would go. */
const MAC = new Uint8Array(32)

/** The rows one request commits. */
interface Pending {
  token?: object
  log: object
  committed: (error?: Error) => void
}

class GroupCommit {
  private queue: Pending[] = []
  private running = false

  constructor(
    private readonly commit: (statements: InsertStatement[]) => Promise<void>,
    private readonly logColumns: readonly string[]
  ) {}

  /** Resolves once the rows are committed. */
  write(log: object, token?: object): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ token, log, committed: (error) => (error ? reject(error) : resolve()) })
      void this.drain()
    })
  }

  private async drain(): Promise<void> {
    if (this.running) return
    this.running = true
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      let error: Error | undefined
      try {
        await this.commit([
          { table: 'tokens', columns: TOKEN_COLUMNS, rows: batch.flatMap((pending) => pending.token ?? []) },
          { table: 'logs', columns: this.logColumns, rows: batch.map((pending) => pending.log) }
        ])
      } catch (failure) {
        error = failure as Error
      }
      for (const pending of batch) pending.committed(error)
    }
    this.running = false
  }
}

let lastSeq = 0
const logRow = (entityId: string, operation: string, now: number) => ({ seq: ++lastSeq, tenant_key: 1, entity_type: 'token', entity_id: entityId, operation, created_at: now, mac: MAC })

/** The database to commit to, from the command line: how to commit a batch there, and to close it. */
async function openDatabase(target: string | undefined): Promise<{ writes: GroupCommit; close(done: () => void): void }> {
  if (target?.startsWith('postgres://') || target?.startsWith('postgresql://')) {
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    await client.query(POSTGRES_SCHEMA)
    return { writes: new GroupCommit((statements) => runPostgresBatch(client, statements), NUMBERED_LOG_COLUMNS), close: (done) => void client.end().finally(done) }
  }
  const file = target ?? join(mkdtempSync(join(tmpdir(), 'tessera-durable-koa-')), 'ceiling.db')
  const db = new sqlite3.Database(file)
  await new Promise<void>((resolve, reject) => db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;' + SCHEMA, (error) => (error ? reject(error) : resolve())))
  return {
    writes: new GroupCommit((statements) => runInsertScript(db, statements), LOG_COLUMNS),
    close: (done) =>
      db.close(() => {
        if (target === undefined) rmSync(dirname(file), { recursive: true, force: true })
        done()
      })
  }
}

async function main(): Promise<void> {
  const { writes, close } = await openDatabase(process.argv[2])
  // Time-ordered ids, as the service's: new rows land at the end of the primary key.
  let nextId = 0
  const newId = () => `${Date.now().toString(16)}-${(nextId++).toString(16).padStart(8, '0')}`
  serveKoaCeiling(
    'Durable Koa',
    {
      async create(data) {
        const id = newId()
        const now = Date.now()
        await writes.write(logRow(id, 'create', now), { tenant_key: 1, id, data: Buffer.from(JSON.stringify(data ?? null)), created_at: now })
        return id
      },
      read: (id) => writes.write(logRow(id, 'read', Date.now()))
    },
    () => close(() => process.exit(0))
  )
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
