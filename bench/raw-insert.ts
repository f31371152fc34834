/**
 * Ceiling for bulk tokenize: seal tokens and insert them with `sqlite3`
 * directly, 1,000 rows per transaction in multi-row VALUES statements, into the
 * real schema with the service's pragmas. No HTTP, no validation, no audit rows.
 */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import sqlite3 from 'sqlite3'
import { sealJson } from '../src/main/crypto/aead'
import { keyedHash } from '../src/main/crypto/hashing'
import { randomBytes } from '../src/main/crypto/random'
import { readySodium } from '../src/main/crypto/sodium'
import { openDatabase } from '../src/main/db/database'

const COLUMNS = ['tenant_id', 'id', 'type', 'key_version', 'sealed_data', 'fingerprint', 'fingerprint_expression', 'containers', 'metadata', 'created_at']
const ROWS_PER_STATEMENT = 100

function run(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (error) => (error ? reject(error) : resolve())))
}

/** Tokens per second sealed and inserted, over `transactions` transactions of `batch` rows. */
export async function measureRawInsert(dir: string, transactions: number, round: number, batch = 1000): Promise<number> {
  await readySodium()
  const file = join(dir, `raw-${round}.db`)
  const schema = await openDatabase(file)
  const tenantId = randomUUID()
  await schema.writer('tenants').insert({ id: tenantId, name: 'bench', created_at: Date.now() })
  await schema.close()

  const db = new sqlite3.Database(file)
  for (const pragma of ['journal_mode = WAL', 'synchronous = FULL', 'foreign_keys = ON', 'secure_delete = ON']) await run(db, `PRAGMA ${pragma}`)
  const key = randomBytes(32)
  const tuple = `(${COLUMNS.map(() => '?').join(',')})`
  const sql = `insert into tokens (${COLUMNS.join(',')}) values ${Array(ROWS_PER_STATEMENT).fill(tuple).join(',')}`
  const started = performance.now()
  for (let t = 0; t < transactions; t++) {
    await run(db, 'BEGIN')
    for (let offset = 0; offset < batch; offset += ROWS_PER_STATEMENT) {
      const params: unknown[] = []
      for (let i = 0; i < ROWS_PER_STATEMENT; i++) {
        const id = randomUUID()
        const data = `value-${t}-${offset + i}`
        const sealed = Buffer.from(sealJson(key, data, `token:${tenantId}:${id}`))
        params.push(tenantId, id, 'token', 1, sealed, keyedHash(key, data), '{{ data | stringify }}', '["/general/high/"]', '{}', Date.now())
      }
      await run(db, sql, params)
    }
    await run(db, 'COMMIT')
  }
  const seconds = (performance.now() - started) / 1000
  await new Promise<void>((resolve) => db.close(() => resolve()))
  return (transactions * batch) / seconds
}
