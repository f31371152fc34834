/**
 * The write queue on PostgreSQL: a batch of appends goes as one script (one
 * round trip), and so do the appends of a batch that also holds a
 * transactional unit, which then still sees them; the rows a transactional
 * unit queues go in one trip too, whatever tables they are for. Each column's
 * values arrive as written, whichever form the batch sent them in.
 */
import { describe, expect, it } from 'vitest'
import { sql } from '../../src/main/storage/connections'
import { flushRows, rowsOf, WriteQueue } from '../../src/main/storage/write-queue'
import { sentOnWriter, usePostgresDatabase } from '../helpers/database'

const COLUMNS = ['name', 'last_run_at']
const LEASED_COLUMNS = ['name', 'last_run_at', 'leased_until']

describe('WriteQueue on PostgreSQL', { timeout: 60_000 }, () => {
  const database = usePostgresDatabase()

  const append = (queue: WriteQueue, name: string) => queue.append((rows) => rows.insert('job_runs', COLUMNS, [{ name, last_run_at: 1 }]))

  it('commits the appends of a batch with a transactional unit as one script, before that unit, which sees them', async () => {
    const queue = new WriteQueue(database.db.writer)
    let seen: string[] = []
    const sent = await sentOnWriter(database.db, () =>
      Promise.all([
        append(queue, 'a'),
        queue.run(async (trx) => (seen = (await sql(trx)('job_runs').whereIn('name', ['a', 'b', 'c']).orderBy('name')).map((row) => row.name))),
        append(queue, 'b'),
        append(queue, 'c')
      ])
    )
    expect(seen).toEqual(['a', 'b', 'c'])
    const scripts = sent.filter((text) => text.startsWith('BEGIN;') && text.includes('INSERT INTO job_runs'))
    expect(scripts).toHaveLength(1)
    expect(sent.filter((text) => /insert into "?job_runs/i.test(text) && !text.startsWith('BEGIN;'))).toEqual([])
    const stored = await sql(database.db.reader)('job_runs').whereIn('name', ['a', 'b', 'c']).select('name')
    expect(stored).toHaveLength(3)
  })

  it('flushes the rows a transactional unit queued for several statements in one trip, which it then reads', async () => {
    const queue = new WriteQueue(database.db.writer)
    let seen: string[] = []
    const sent = await sentOnWriter(database.db, () =>
      queue.run(async (tx) => {
        rowsOf(tx).insert('job_runs', COLUMNS, [{ name: 'd', last_run_at: 1 }])
        rowsOf(tx).insert('job_runs', LEASED_COLUMNS, [{ name: 'e', last_run_at: 1, leased_until: 2 }])
        await flushRows(tx)
        seen = (await sql(tx)('job_runs').whereIn('name', ['d', 'e']).orderBy('name')).map((row) => row.name)
      })
    )
    expect(seen).toEqual(['d', 'e'])
    const trips = sent.filter((text) => /insert into "?job_runs/i.test(text))
    expect(trips).toHaveLength(1)
    expect(trips[0].match(/INSERT INTO job_runs/g)).toHaveLength(2)
  })

  it('stores every value of a batch as written: text in any script, bytes, 64-bit integers and NULLs', async () => {
    const queue = new WriteQueue(database.db.writer)
    const TENANT_KEY = 424242
    const token = (id: string, text: string, createdAt: number) => ({
      tenant_key: TENANT_KEY,
      id,
      type: 'token',
      key_version: 2147483647,
      sealed_data: Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256)),
      fingerprint: Buffer.alloc(32, 0xab),
      fingerprint_expression: text,
      mask: null,
      containers: '["/"]',
      metadata: JSON.stringify({ note: text }),
      created_at: createdAt
    })
    const rows = [
      token('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'é 日本語 𝄞 ﷽ '.repeat(50), Number.MAX_SAFE_INTEGER),
      token('01234567-89ab-7def-8123-456789abcdef', '', -1)
    ]
    await queue.append((batch) => batch.insert('tokens', Object.keys(rows[0]), rows))
    const stored = await sql(database.db.reader)('tokens').where({ tenant_key: TENANT_KEY }).orderBy('id').select(Object.keys(rows[0]))
    expect(stored).toEqual(
      [rows[1], rows[0]].map((row) => ({ ...row, sealed_data: Buffer.from(row.sealed_data), fingerprint: Buffer.from(row.fingerprint) }))
    )
  })
})
