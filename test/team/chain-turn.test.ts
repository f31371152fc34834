/**
 * The audit chain's turn on PostgreSQL: an instance that takes it waits for
 * the instance holding it, and then reads what that one committed, not what
 * was there when it began waiting (a batch sealed from an older head would
 * fork the chain). While instances append in turn, each takes the turn first
 * instead of sending batches the other's appends would make it refuse.
 */
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { AuditChain, GENESIS, type ChainLink } from '../../src/main/app/audit-chain'
import type { AuditMacKey } from '../../src/main/crypto/audit'
import { sql } from '../../src/main/storage/connections'
import type { Database } from '../../src/main/storage/database'
import { runPostgresBatch, type RawPostgres } from '../../src/main/storage/postgres-batch'
import { auditChainTurnGuard, lastChainedLog, takeAuditChainTurn } from '../../src/main/storage/repositories/logs.repository'
import { isStaleState } from '../../src/main/storage/sql-script'
import { WriteQueue } from '../../src/main/storage/write-queue'
import { sentOnWriter, usePostgresDatabase } from '../helpers/database'

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
      expect((await takeAuditChainTurn((script) => trx.raw(script))).checkpoint).toBeUndefined()
      await trx('log_chain').insert(checkpoint)
      holding()
      await new Promise<void>((resolve) => (finish = resolve))
    })
    await held
    let settled = false
    const waiter = sql(second().writer)
      .transaction((trx) => takeAuditChainTurn((script) => trx.raw(script)))
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
      await takeAuditChainTurn((script) => trx.raw(script))
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
    // Its refusal can arrive in the same turn as the holder's commit, before the assertion below awaits it.
    batch.catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(settled).toBe(false)

    finish()
    await holder
    await expect(batch).rejects.toSatisfy(isStaleState)
    const messages = (await sql(second().reader)('logs').select('message').orderBy('seq')).map((row) => row.message)
    expect(messages).toEqual(['the head', 'appended by the holder'])
  })

  it('takes the turn first while the other instance appends in between, and sends a batch in one trip again once it stops', async () => {
    const key = randomBytes(32) as unknown as AuditMacKey
    const last = await lastChainedLog(first().reader)
    const head: ChainLink = last?.mac ? { seq: Number(last.seq), mac: last.mac } : GENESIS
    const queueOf = (instance: Database) => new WriteQueue(instance.writer, { sealer: new AuditChain(key, head, true) })
    const [a, b] = [queueOf(first()), queueOf(second())]
    const columns = ['tenant_key', 'entity_type', 'entity_id', 'operation', 'message', 'created_at', 'seq', 'mac']
    // Every field the chain's MAC covers; only the columns above are stored.
    const entry = (message: string) => ({ tenant_key: 1, tenant_id: 't', actor_id: null, actor_type: null, entity_type: 'token', entity_id: 'e', operation: 'read', message, created_at: 1, count: null, trace_id: null })
    const append = (queue: WriteQueue, message: string) => queue.append((rows) => rows.insert('logs', columns, [entry(message)], { sealed: true }))

    // The first batch on A after B appended is refused once; while A and B keep taking turns, A never sends another that would be.
    const alternating = await sentOnWriter(first(), async () => {
      for (let turn = 1; turn <= 4; turn++) {
        await append(b, `b${turn}`)
        await append(a, `a${turn}`)
      }
    })
    expect(alternating.filter((text) => text === 'ROLLBACK')).toHaveLength(1)
    // Each of A's four batches takes the turn as it begins its transaction, and commits with its rows: two round trips.
    const turns = alternating.filter((text) => text.includes('pg_advisory_xact_lock'))
    expect(turns).toHaveLength(4)
    expect(turns.every((text) => text.startsWith('BEGIN;'))).toBe(true)
    expect(alternating.filter((text) => text.includes('INSERT INTO logs') && text.endsWith('COMMIT;') && !text.startsWith('BEGIN;'))).toHaveLength(4)

    // Alone again: the next batch takes the turn and finds no entry of B's since A's last; those after it go in one trip.
    const alone = await sentOnWriter(first(), async () => {
      for (let turn = 5; turn <= 7; turn++) await append(a, `a${turn}`)
    })
    expect(alone.filter((text) => text === 'ROLLBACK')).toEqual([])
    expect(alone.filter((text) => text.startsWith('BEGIN;') && text.includes('tessera_audit_chain_turn'))).toHaveLength(2)

    // A conflict in a batch that takes the turn rolls it back; replayed alone, only the unit that caused it fails.
    await append(b, 'b5')
    const withJob = (message: string, job: string) =>
      a.append((rows) => {
        rows.insert('logs', columns, [entry(message)], { sealed: true })
        rows.insert('job_runs', ['name', 'last_run_at'], [{ name: job, last_run_at: 1 }], { onConflict: () => new Error(`${job} exists`) })
      })
    const outcomes = await Promise.allSettled([withJob('a8', 'job'), withJob('a9', 'job')])
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'ok'))).toEqual(['ok', 'Error: job exists'])

    const chain = await sql(second().reader)('logs').where('seq', '>', head.seq).orderBy('seq').select('seq', 'message')
    expect(chain.map((row) => row.message)).toEqual(['b1', 'a1', 'b2', 'a2', 'b3', 'a3', 'b4', 'a4', 'a5', 'a6', 'a7', 'b5', 'a8'])
    expect(chain.map((row) => Number(row.seq))).toEqual(Array.from({ length: 13 }, (_, i) => head.seq + 1 + i))
  })
})
