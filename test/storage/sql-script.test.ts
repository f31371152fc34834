import { beforeAll, describe, expect, it } from 'vitest'
import { runInsertScript, sqlLiteral, type InsertStatement, type RawSqlite } from '../../src/main/storage/sql-script'
import { sql } from '../../src/main/storage/connections'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { useTemporaryDatabase } from '../helpers/database'

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
