/**
 * Ceiling for bulk tokenize: seal tokens and insert them with `sqlite3`
 * directly, 1,000 rows per transaction in multi-row VALUES statements, into the
 * real schema with the service's pragmas and id scheme. No HTTP, no
 * validation, no audit rows. The table is first filled to the size of the
 * service's, because inserts slow down as indexes grow: both sides are then
 * measured at the same table size.
 */
import { randomUUID } from 'node:crypto'
import sqlite3 from 'sqlite3'
import { sealJson } from '../src/main/crypto/aead'
import { keyedHash } from '../src/main/crypto/hashing'
import { newTimeOrderedId, randomBytes } from '../src/main/crypto/random'
import { readySodium } from '../src/main/crypto/sodium'
import type { DataKey } from '../src/main/crypto/types'
import { sql } from '../src/main/storage/connections'
import { openDatabase } from '../src/main/storage/database'

const COLUMNS = ['tenant_id', 'id', 'type', 'key_version', 'sealed_data', 'fingerprint', 'fingerprint_expression', 'containers', 'metadata', 'created_at']
const ROWS_PER_STATEMENT = 100
const BATCH = 1000

function run(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (error) => (error ? reject(error) : resolve())))
}

export class RawInsertCeiling {
  private constructor(
    private readonly db: sqlite3.Database,
    private readonly tenantId: string,
    private rows: number
  ) {}

  static async open(file: string): Promise<RawInsertCeiling> {
    await readySodium()
    const schema = await openDatabase(file)
    const tenantId = randomUUID()
    await sql(schema.writer)('tenants').insert({ id: tenantId, name: 'bench', created_at: Date.now() })
    await schema.close()
    const db = new sqlite3.Database(file)
    for (const pragma of ['journal_mode = WAL', 'synchronous = FULL', 'foreign_keys = ON', 'secure_delete = ON', 'busy_timeout = 5000']) await run(db, `PRAGMA ${pragma}`)
    return new RawInsertCeiling(db, tenantId, 0)
  }

  /** Inserts (untimed) until the table holds `rows` tokens. */
  async fillTo(rows: number): Promise<void> {
    while (this.rows + BATCH <= rows) await this.insertBatch()
  }

  /** Tokens per second sealed and inserted over `transactions` transactions of 1,000 rows. */
  async measure(transactions: number): Promise<number> {
    const started = performance.now()
    for (let t = 0; t < transactions; t++) await this.insertBatch()
    return (transactions * BATCH) / ((performance.now() - started) / 1000)
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.db.close(() => resolve()))
  }

  private async insertBatch(): Promise<void> {
    const key = randomBytes(32) as DataKey
    const tuple = `(${COLUMNS.map(() => '?').join(',')})`
    const sql = `insert into tokens (${COLUMNS.join(',')}) values ${Array(ROWS_PER_STATEMENT).fill(tuple).join(',')}`
    await run(this.db, 'BEGIN')
    for (let offset = 0; offset < BATCH; offset += ROWS_PER_STATEMENT) {
      const params: unknown[] = []
      for (let i = 0; i < ROWS_PER_STATEMENT; i++) {
        const id = newTimeOrderedId()
        const data = `value-${this.rows + offset + i}`
        const sealed = Buffer.from(sealJson(key, data, `token:${this.tenantId}:${id}`))
        params.push(this.tenantId, id, 'token', 1, sealed, keyedHash(key, data), '{{ data | stringify }}', '["/general/high/"]', '{}', Date.now())
      }
      await run(this.db, sql, params)
    }
    await run(this.db, 'COMMIT')
    this.rows += BATCH
  }
}
