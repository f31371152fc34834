/**
 * Ceiling for bulk tokenize: seal tokens and insert them with `sqlite3` (or,
 * for a team vault, `pg`) directly — the same work as the service's, done the
 * best way the driver allows: multi-row INSERT statements prepared once and
 * reused, 1,000 rows per transaction, into the real schema with the service's
 * pragmas and id scheme.
 * No HTTP, no validation, no audit rows. The table is first filled to the
 * size of the service's, because inserts slow down as indexes grow: both
 * sides are then measured at the same table size.
 *
 * Run as a child of bench/run.ts (so it can be pinned to the server's core):
 * `node bin/run-ts.cjs bench/raw-insert.ts <database file or PostgreSQL URL>`, driven over the
 * IPC channel with `RawInsertRequest` messages, each answered with a
 * `RawInsertReply`.
 */
import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { Client } from 'pg'
import sqlite3 from 'sqlite3'
import { sealJson } from '../src/main/crypto/aead'
import { keyedHash } from '../src/main/crypto/hashing'
import { newTimeOrderedId, randomBytes } from '../src/main/crypto/random'
import { readySodium } from '../src/main/crypto/sodium'
import type { DataKey } from '../src/main/crypto/types'
import { getTokenType } from '../src/main/domain/token-types'
import { openDatabase } from '../src/main/storage/database'
import { insertTenant } from '../src/main/storage/repositories/tenants.repository'
import { tenantKeys } from '../src/main/storage/tenant-keys'
import { isPostgresUrl } from '../src/main/storage/dialect'
import { spawnServer, stopChild } from './children'

/** What the ceiling tokenizes: plain 100-byte-ish strings, or cards as POST /tokenize stores them. */
export type RawKind = 'plain' | 'card'

export type RawInsertRequest = { fillTo: number } | { measure: number; kind: RawKind } | { close: true }
export type RawInsertReply = { ok: true; tokensPerSecond?: number } | { ok: false; error: string }

const COLUMNS = ['tenant_key', 'id', 'type', 'key_version', 'sealed_data', 'fingerprint', 'fingerprint_expression', 'mask', 'containers', 'metadata', 'created_at']
const ROWS_PER_STATEMENT = 100
const BATCH = 1000
const CARD = getTokenType('card')!
const PLAIN = getTokenType('token')!
const CARD_MASK = JSON.stringify(CARD.defaultMask)

function run(db: sqlite3.Database, statement: string): Promise<void> {
  return new Promise((resolve, reject) => db.run(statement, (error) => (error ? reject(error) : resolve())))
}

function runPrepared(statement: sqlite3.Statement, params: unknown[]): Promise<void> {
  return new Promise((resolve, reject) => statement.run(params, (error) => (error ? reject(error) : resolve())))
}

/** The `n`th of a series of distinct, valid (Luhn) 16-digit card numbers starting with 4. */
export function cardNumber(n: number): string {
  const body = `4${String(n % 1e14).padStart(14, '0')}`
  let sum = 0
  for (let i = 0; i < body.length; i++) {
    // Doubling every second digit from the right, counting the check digit to come as the first.
    let digit = Number(body[body.length - 1 - i])
    if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2
    sum += digit
  }
  return body + String((10 - (sum % 10)) % 10)
}

/** The data of the `n`th card of the benchmark: POST /tokenize sends the same series. */
export function benchCard(n: number): { number: string; expiration_month: number; expiration_year: number } {
  return { number: cardNumber(n), expiration_month: 12, expiration_year: 2035 + (n % 10) }
}

/** The tenant's public id (in the sealing's associated data) and its key (in the row). */
interface Tenant {
  id: string
  key: number
}

/** The columns of one token of `kind`, in COLUMNS order. */
function tokenRow(kind: RawKind, key: DataKey, tenant: Tenant, n: number): unknown[] {
  const id = newTimeOrderedId()
  const type = kind === 'card' ? CARD : PLAIN
  const data = kind === 'card' ? benchCard(n) : `value-${n}-${'x'.repeat(20)}`
  const sealed = Buffer.from(sealJson(key, data, `token:${tenant.id}:${id}`))
  const fingerprint = Buffer.from(keyedHash(key, `${type.name}\u0000${type.defaultFingerprintSource(data)}`), 'hex')
  const mask = kind === 'card' ? CARD_MASK : null
  return [tenant.key, id, type.name, 1, sealed, fingerprint, '', mask, JSON.stringify(type.defaultContainers), '{}', Date.now()]
}

/** A ceiling: fills its table untimed, then measures tokens per second. */
interface Ceiling {
  fillTo(rows: number): Promise<void>
  measure(transactions: number, kind: RawKind): Promise<number>
  close(): Promise<void>
}

/** A tenant in a fresh vault schema at `location` (migrations run), to insert tokens for. */
async function benchTenant(location: string): Promise<Tenant> {
  await readySodium()
  const schema = await openDatabase(location)
  const tenantId = randomUUID()
  await insertTenant(schema.writer, { id: tenantId, name: 'bench', owner_user_id: null, created_at: Date.now() })
  const tenant = { id: tenantId, key: tenantKeys(schema.writer).keyOf(tenantId) }
  await schema.close()
  return tenant
}

/** Timing and filling, the same for both drivers: `insertBatch` seals and inserts BATCH rows in one transaction. */
abstract class BatchCeiling implements Ceiling {
  protected rows = 0

  /** Inserts (untimed) until the table holds `rows` tokens. */
  async fillTo(rows: number): Promise<void> {
    while (this.rows + BATCH <= rows) await this.insertBatch('plain')
  }

  /** Tokens per second sealed and inserted over `transactions` transactions of 1,000 rows. */
  async measure(transactions: number, kind: RawKind): Promise<number> {
    const started = performance.now()
    for (let t = 0; t < transactions; t++) await this.insertBatch(kind)
    return (transactions * BATCH) / ((performance.now() - started) / 1000)
  }

  abstract close(): Promise<void>
  protected abstract insertBatch(kind: RawKind): Promise<void>
}

/** PostgreSQL through `pg`: one named (server-side prepared) multi-row INSERT. */
class RawPgInsertCeiling extends BatchCeiling {
  private constructor(
    private readonly client: Client,
    private readonly tenant: Tenant
  ) {
    super()
  }

  static async open(url: string): Promise<RawPgInsertCeiling> {
    const tenant = await benchTenant(url)
    const client = new Client({ connectionString: url })
    await client.connect()
    return new RawPgInsertCeiling(client, tenant)
  }

  async close(): Promise<void> {
    await this.client.end()
  }

  protected async insertBatch(kind: RawKind): Promise<void> {
    const key = randomBytes(32) as DataKey
    const tuples = Array.from({ length: ROWS_PER_STATEMENT }, (_, row) => `(${COLUMNS.map((_, column) => `$${row * COLUMNS.length + column + 1}`).join(',')})`)
    const text = `insert into tokens (${COLUMNS.join(',')}) values ${tuples.join(',')}`
    await this.client.query('BEGIN')
    for (let offset = 0; offset < BATCH; offset += ROWS_PER_STATEMENT) {
      const values: unknown[] = []
      for (let i = 0; i < ROWS_PER_STATEMENT; i++) values.push(...tokenRow(kind, key, this.tenant, this.rows + offset + i))
      await this.client.query({ name: 'insert-tokens', text, values })
    }
    await this.client.query('COMMIT')
    this.rows += BATCH
  }
}

/** SQLite through `sqlite3`, with the service's pragmas. */
export class RawInsertCeiling extends BatchCeiling {
  private constructor(
    private readonly db: sqlite3.Database,
    private readonly insert: sqlite3.Statement,
    private readonly tenant: Tenant
  ) {
    super()
  }

  static async open(file: string): Promise<RawInsertCeiling> {
    const tenant = await benchTenant(file)
    const db = new sqlite3.Database(file)
    for (const pragma of ['journal_mode = WAL', 'synchronous = FULL', 'foreign_keys = ON', 'secure_delete = ON', 'busy_timeout = 5000']) await run(db, `PRAGMA ${pragma}`)
    const tuple = `(${COLUMNS.map(() => '?').join(',')})`
    const insert = db.prepare(`insert into tokens (${COLUMNS.join(',')}) values ${Array(ROWS_PER_STATEMENT).fill(tuple).join(',')}`)
    return new RawInsertCeiling(db, insert, tenant)
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.insert.finalize(() => resolve(undefined)))
    await new Promise((resolve) => this.db.close(() => resolve(undefined)))
  }

  protected async insertBatch(kind: RawKind): Promise<void> {
    const key = randomBytes(32) as DataKey
    await run(this.db, 'BEGIN')
    for (let offset = 0; offset < BATCH; offset += ROWS_PER_STATEMENT) {
      const params: unknown[] = []
      for (let i = 0; i < ROWS_PER_STATEMENT; i++) params.push(...tokenRow(kind, key, this.tenant, this.rows + offset + i))
      await runPrepared(this.insert, params)
    }
    await run(this.db, 'COMMIT')
    this.rows += BATCH
  }
}

/** What the child answers to one request. */
async function answer(ceiling: Ceiling, request: RawInsertRequest): Promise<RawInsertReply> {
  if ('fillTo' in request) await ceiling.fillTo(request.fillTo)
  else if ('measure' in request) return { ok: true, tokensPerSecond: await ceiling.measure(request.measure, request.kind) }
  else await ceiling.close()
  return { ok: true }
}

/** The child's side of the IPC channel: one request at a time, in order; exits after `close`. */
async function serve(location: string): Promise<void> {
  const ceiling: Ceiling = isPostgresUrl(location) ? await RawPgInsertCeiling.open(location) : await RawInsertCeiling.open(location)
  let queue = Promise.resolve()
  process.on('message', (request: RawInsertRequest) => {
    queue = queue.then(async () => {
      const reply = await answer(ceiling, request).catch((error: unknown): RawInsertReply => ({ ok: false, error: String(error) }))
      process.send!(reply, () => 'close' in request && process.exit(0))
    })
  })
  process.send!({ ok: true } satisfies RawInsertReply)
}

/** The parent's handle on the ceiling, run as a child process on the server's core. */
export class RawInsertChild {
  private constructor(private readonly child: ChildProcess) {}

  static async start(file: string): Promise<RawInsertChild> {
    const child = spawnServer(['bin/run-ts.cjs', 'bench/raw-insert.ts', file], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const ceiling = new RawInsertChild(child)
    await ceiling.reply() // ready
    return ceiling
  }

  /** The child's process id (taskset execs the command, so it is the ceiling's own), for its CPU time. */
  get pid(): number {
    return this.child.pid!
  }

  async fillTo(rows: number): Promise<void> {
    await this.request({ fillTo: rows })
  }

  async measure(transactions: number, kind: RawKind): Promise<number> {
    return (await this.request({ measure: transactions, kind })).tokensPerSecond!
  }

  async close(): Promise<void> {
    await this.request({ close: true }).catch(() => undefined)
    await stopChild(this.child)
  }

  private request(request: RawInsertRequest): Promise<RawInsertReply & { ok: true }> {
    const replied = this.reply()
    this.child.send(request)
    return replied
  }

  private reply(): Promise<RawInsertReply & { ok: true }> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the raw insert ceiling exited with ${code}`))
      this.child.once('exit', onExit)
      this.child.once('message', (reply: RawInsertReply) => {
        this.child.off('exit', onExit)
        if (reply.ok) resolve(reply)
        else reject(new Error(`raw insert ceiling: ${reply.error}`))
      })
    })
  }
}

if (process.argv[1] === __filename && process.send) {
  serve(process.argv[2]).catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
