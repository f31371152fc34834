import { beforeAll, describe, expect, it } from 'vitest'
import { isStaleState, runInsertScript, sqlLiteral, type InsertStatement, type RawSqlite, type ScriptGuard } from '../../src/main/storage/sql-script'
import { runPostgresBatch, type RawPostgres } from '../../src/main/storage/postgres-batch'
import { sql } from '../../src/main/storage/connections'
import { auditChainTurnGuard } from '../../src/main/storage/repositories/logs.repository'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { usePostgresDatabase, useTemporaryDatabase } from '../helpers/database'

describe('runInsertScript', () => {
  const temporary = useTemporaryDatabase('script')
  const db = () => temporary.db
  beforeAll(async () => {
    await insertTenant(db().writer, { id: 't1', name: 'Tenant', owner_user_id: null, created_at: 1 })
  })

  /** Runs a script on the writer connection, as the write queue does. */
  async function script(statements: InsertStatement[]): Promise<void> {
    const connection = (await sql(db().writer).client.acquireConnection()) as RawSqlite
    try {
      await runInsertScript(connection, statements)
    } finally {
      sql(db().writer).client.releaseConnection(connection)
    }
  }

  const columns = ['tenant_key', 'entity_type', 'entity_id', 'operation', 'message', 'created_at']

  it('stores text exactly, whatever quotes, SQL or control characters it holds', async () => {
    const tricky = ["it's", "'); DROP TABLE logs; --", 'nul\u0000byte', 'émoji 🔐', '\\x27']
    await script([
      { table: 'logs', columns, rows: tricky.map((message, i) => ({ tenant_key: 1, entity_type: 'token', entity_id: `e${i}`, operation: 'read', message, created_at: i })) }
    ])
    const stored = await sql(db().reader)('logs').select('message').orderBy('created_at')
    expect(stored.map((row) => row.message)).toEqual(tricky)
  })

  it('stores bytes exactly and keeps integers as integers', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255])
    await script([{ table: 'vault', columns: ['id', 'format_version', 'wrapped_secret_hash_key', 'created_at'], rows: [{ id: 1, format_version: 1, wrapped_secret_hash_key: bytes, created_at: 1_795_000_000_000 }] }])
    const row = await sql(db().reader)('vault').first()
    expect(Buffer.from(row.wrapped_secret_hash_key)).toEqual(bytes)
    expect(row.created_at).toBe(1_795_000_000_000)
  })

  it('writes all statements or none', async () => {
    const before = await sql(db().reader)('logs').count({ n: '*' }).first()
    const insert = script([
      { table: 'logs', columns, rows: [{ tenant_key: 1, entity_type: 'token', entity_id: 'kept?', operation: 'read', message: 'm', created_at: 9 }] },
      { table: 'tenants', columns: ['id', 'name', 'created_at'], rows: [{ id: 't1', name: 'duplicate', created_at: 1 }] }
    ])
    await expect(insert).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_CONSTRAINT/) })
    expect(await sql(db().reader)('logs').count({ n: '*' }).first()).toEqual(before)
  })

  it('refuses values the schema never holds rather than guessing their SQL', () => {
    expect(() => sqlLiteral(1.5)).toThrow(TypeError)
    expect(() => sqlLiteral({})).toThrow(TypeError)
  })
})

describe('runPostgresBatch', () => {
  const TENANT = '00000000-0000-4000-8000-000000000001'
  const postgres = usePostgresDatabase()
  beforeAll(() => insertTenant(postgres.db.writer, { id: TENANT, name: 'Tenant', owner_user_id: null, created_at: 1 }))

  /** Runs a script on the writer connection, as the write queue does, after `setup` on that connection. */
  async function script(statements: InsertStatement[], { guard, setup }: { guard?: ScriptGuard; setup?: string } = {}): Promise<void> {
    const connection = (await sql(postgres.db.writer).client.acquireConnection()) as RawPostgres
    try {
      if (setup) await connection.query(setup)
      await runPostgresBatch(connection, statements, guard)
    } finally {
      await connection.query('RESET ALL')
      sql(postgres.db.writer).client.releaseConnection(connection)
    }
  }

  const columns = ['tenant_key', 'entity_type', 'entity_id', 'operation', 'message', 'created_at', 'seq']
  let seq = 0
  const logRow = (message: string, created_at = 1) => ({ tenant_key: 1, entity_type: 'token', entity_id: 'e', operation: 'read', message, created_at, seq: ++seq })
  const messages = async () => (await sql(postgres.db.reader)('logs').select('message').orderBy('seq')).map((row) => row.message as string)

  it('stores text exactly, whatever quotes, backslashes or SQL it holds, with standard_conforming_strings on or off', async () => {
    const tricky = ["it's", "'); DROP TABLE logs; --", 'émoji 🔐', '\\x27', "\\'; SELECT 1; --", 'back\\slash\\', '$$ $guard$']
    await script([{ table: 'logs', columns, rows: tricky.map((message) => logRow(message)) }])
    await script([{ table: 'logs', columns, rows: tricky.map((message) => logRow(message)) }], { setup: 'SET standard_conforming_strings = off' })
    expect(await messages()).toEqual([...tricky, ...tricky])
  })

  it('refuses a NUL byte in text, as PostgreSQL refuses it bound, and writes nothing of the script', async () => {
    const before = await messages()
    await expect(script([{ table: 'logs', columns, rows: [logRow('kept?'), logRow('nul\u0000byte')] }])).rejects.toThrow()
    expect(await messages()).toEqual(before)
  })

  it('stores bytes exactly and integers beyond 32 bits as numbers', async () => {
    const bytes = Buffer.from([0, 1, 2, 39, 92, 250, 255])
    await script([{ table: 'vault', columns: ['id', 'format_version', 'wrapped_secret_hash_key', 'created_at'], rows: [{ id: 1, format_version: 1, wrapped_secret_hash_key: bytes, created_at: 1_795_000_000_000 }] }])
    const row = await sql(postgres.db.reader)('vault').first()
    expect(Buffer.from(row.wrapped_secret_hash_key)).toEqual(bytes)
    expect(row.created_at).toBe(1_795_000_000_000)
  })

  it('writes all statements or none', async () => {
    const before = await messages()
    const insert = script([
      { table: 'logs', columns, rows: [logRow('kept?')] },
      { table: 'tenants', columns: ['id', 'name', 'created_at'], rows: [{ id: TENANT, name: 'duplicate', created_at: 1 }] }
    ])
    await expect(insert).rejects.toMatchObject({ code: '23505' })
    expect(await messages()).toEqual(before)
  })

  it("runs after the audit chain's guard when the head is the one expected, and writes nothing when it moved on", async () => {
    const head = await sql(postgres.db.reader)('logs').select('seq').orderBy('seq', 'desc').first()
    const mac = Buffer.alloc(32, 7)
    await sql(postgres.db.writer)('logs').where({ seq: head.seq }).update({ mac })
    await script([{ table: 'logs', columns, rows: [logRow('after the expected head')] }], { guard: auditChainTurnGuard(Number(head.seq), mac) })
    expect((await messages()).at(-1)).toBe('after the expected head')

    const stale = script([{ table: 'logs', columns, rows: [logRow('after a stale head')] }], { guard: auditChainTurnGuard(Number(head.seq), mac) })
    await expect(stale).rejects.toSatisfy(isStaleState)
    expect((await messages()).at(-1)).toBe('after the expected head')
  })

  it('refuses values the schema never holds rather than guessing their SQL', async () => {
    await expect(script([{ table: 'logs', columns, rows: [{ ...logRow('NaN'), created_at: Number.NaN }] }])).rejects.toThrow(TypeError)
    await expect(script([{ table: 'logs', columns, rows: [logRow({} as string)] }])).rejects.toThrow(TypeError)
  })

  it("reads a value of another kind than its column's type as the type's input function does, and NULLs as NULL", async () => {
    const row = { id: '00000000-0000-4000-8000-0000000000a1', tenant_id: TENANT, webhook_id: '00000000-0000-4000-8000-0000000000a2', event_id: '00000000-0000-4000-8000-0000000000a3' }
    const delivery = (overrides: Record<string, unknown>) => ({ ...row, event_type: 'token.created', event: '{}', status: 'pending', attempts: 0, next_attempt_at: 5, attempt_log: '[]', created_at: 1, completed_at: null, ...overrides })
    const deliveryColumns = Object.keys(delivery({}))
    await script([
      {
        table: 'webhook_deliveries',
        columns: deliveryColumns,
        // a number in a text column, digits in an integer column, an upper-case UUID
        rows: [delivery({ event: 42, attempts: '3' }), delivery({ id: '00000000-0000-4000-8000-0000000000B1', completed_at: 9 })]
      }
    ])
    const stored = await sql(postgres.db.reader)('webhook_deliveries').select('id', 'event', 'attempts', 'completed_at').orderBy('id')
    expect(stored).toEqual([
      { id: row.id, event: '42', attempts: 3, completed_at: null },
      { id: '00000000-0000-4000-8000-0000000000b1', event: '{}', attempts: 0, completed_at: 9 }
    ])
  })

  it("refuses text longer than its column, and a batch after a failed one runs as usual", async () => {
    const before = await messages()
    await expect(script([{ table: 'logs', columns, rows: [logRow('x'.repeat(501))] }])).rejects.toMatchObject({ code: '22001' })
    expect(await messages()).toEqual(before)
    await script([{ table: 'logs', columns, rows: [logRow('after the failure')] }])
    expect((await messages()).at(-1)).toBe('after the failure')
  })

  it('prepares its statements again when the connection lost them, after one failed batch', async () => {
    await script([{ table: 'logs', columns, rows: [logRow('prepared')] }])
    const before = await messages()
    await expect(script([{ table: 'logs', columns, rows: [logRow('lost')] }], { setup: 'DEALLOCATE ALL' })).rejects.toMatchObject({ code: '26000' })
    expect(await messages()).toEqual(before)
    await script([{ table: 'logs', columns, rows: [logRow('prepared again')] }])
    expect((await messages()).at(-1)).toBe('prepared again')
  })

  it('adds counter rows of one key together and to the stored counter', async () => {
    const counter = { table: 'log_counts', columns: ['tenant_key', 'entity_type', 'count'], addTo: { key: ['tenant_key', 'entity_type'], column: 'count' } }
    await script([{ ...counter, rows: [{ tenant_key: 1, entity_type: 'counted', count: 2 }, { tenant_key: 1, entity_type: 'counted', count: 3 }] }])
    await script([{ ...counter, rows: [{ tenant_key: 1, entity_type: 'counted', count: 4 }] }])
    expect(await sql(postgres.db.reader)('log_counts').where({ entity_type: 'counted' }).first()).toMatchObject({ count: 9 })
  })
})
