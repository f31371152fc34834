/**
 * The audit chain's turn on PostgreSQL: an instance that takes it waits for
 * the instance holding it, and then reads what that one committed, not what
 * was there when it began waiting (a batch sealed from an older head would
 * fork the chain).
 */
import { describe, expect, it } from 'vitest'
import { sql, txOf } from '../../src/main/storage/connections'
import { runPostgresBatch, type RawPostgres } from '../../src/main/storage/postgres-batch'
import { auditChainTurnGuard, takeAuditChainTurn } from '../../src/main/storage/repositories/logs.repository'
import { isStaleState } from '../../src/main/storage/sql-script'
import { usePostgresDatabase } from '../helpers/database'

describe('The audit chain turn on PostgreSQL', { timeout: 60_000 }, () => {
  const database = usePostgresDatabase({ instances: 2 })
  const first = () => database.instances[0]
  const second = () => database.instances[1]

  it('waits for the instance holding the turn and reads the checkpoint it committed', async () => {
    const checkpoint = { checkpoint_seq: 42, checkpoint_mac: Buffer.alloc(32, 1), anchor_seq: 7, anchor_mac: Buffer.alloc(32, 2), checkpoint_tag: Buffer.alloc(32, 3) }
    let finish!: () => void
    let holding!: () => void
    const held = new Promise<void>((resolve) => (holding = resolve))
    const holder = sql(first().writer).transaction(async (trx) => {
      expect((await takeAuditChainTurn(txOf(trx))).checkpoint).toBeUndefined()
      await trx('log_chain').insert(checkpoint)
      holding()
      await new Promise<void>((resolve) => (finish = resolve))
    })
    await held
    let settled = false
    const waiter = sql(second().writer)
      .transaction((trx) => takeAuditChainTurn(txOf(trx)))
      .finally(() => (settled = true))
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(settled).toBe(false)

    finish()
    await holder
    const turn = await waiter
    expect(Number(turn.checkpoint?.checkpoint_seq)).toBe(42)
    expect(Number(turn.checkpoint?.anchor_seq)).toBe(7)
    expect(turn.last).toBeUndefined()
  })

  it("holds a one-trip batch sealed from the head until the holder commits, then refuses it when the holder appended, writing nothing", async () => {
    const columns = ['tenant_key', 'entity_type', 'entity_id', 'operation', 'message', 'created_at', 'seq', 'mac']
    const entry = (seq: number, message: string) => ({ tenant_key: 1, entity_type: 'token', entity_id: 'e', operation: 'read', message, created_at: seq, seq, mac: Buffer.alloc(32, seq) })
    await sql(first().writer)('logs').insert(entry(100, 'the head'))

    let finish!: () => void
    let holding!: () => void
    const held = new Promise<void>((resolve) => (holding = resolve))
    const holder = sql(first().writer).transaction(async (trx) => {
      await takeAuditChainTurn(txOf(trx))
      await trx('logs').insert(entry(101, 'appended by the holder'))
      holding()
      await new Promise<void>((resolve) => (finish = resolve))
    })
    await held
    const connection = (await sql(second().writer).client.acquireConnection()) as RawPostgres
    let settled = false
    const batch = runPostgresBatch(connection, [{ table: 'logs', columns, rows: [entry(102, 'sealed after the old head')] }], auditChainTurnGuard(100, Buffer.alloc(32, 100)))
      .finally(() => (settled = true))
      .finally(() => sql(second().writer).client.releaseConnection(connection))
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(settled).toBe(false)

    finish()
    await holder
    await expect(batch).rejects.toSatisfy(isStaleState)
    const messages = (await sql(second().reader)('logs').select('message').orderBy('seq')).map((row) => row.message)
    expect(messages).toEqual(['the head', 'appended by the holder'])
  })
})
