/**
 * The audit log's entity index on PostgreSQL: the `index-logs` sweep folds the
 * entries past its mark into `log_entities` a seq range at a time. A new team
 * vault's tables have no statistics yet, and the fold must still read the
 * range through the primary key (a scan of the whole log per fold grows with
 * the log), and it must step over the gaps a PostgreSQL sequence leaves.
 */
import type { Knex } from 'knex'
import { describe, expect, it } from 'vitest'
import { sql, txOf } from '../../src/main/storage/connections'
import { foldLogEntities } from '../../src/main/storage/repositories/logs.repository'
import { usePostgresDatabase } from '../helpers/database'

describe("The audit log's entity index fold on PostgreSQL", { timeout: 60_000 }, () => {
  const database = usePostgresDatabase()
  const db = () => sql(database.db.writer)

  /** Entries with the given seq numbers, of three entities in turn. */
  const insertEntries = (from: number, to: number) =>
    db().raw(
      `INSERT INTO logs (seq, tenant_key, entity_type, entity_id, operation, message, created_at)
       SELECT n, 1, 'token', 'token-' || (n % 3), 'read', 'Token retrieved', n FROM generate_series(?::bigint, ?::bigint) AS n`,
      [from, to]
    )
  const mark = async () => Number((await db()('log_entity_index').first()).folded_through)
  const indexed = async () => (await db()('log_entities').orderBy('seq').pluck('seq')).map(Number)
  const fold = (limit: number) => db().transaction((trx) => foldLogEntities(txOf(trx), limit))

  it('reads its range through the primary key on a log without statistics', async () => {
    await insertEntries(1, 20_000)
    // The backend's scan counters of `logs` around the fold (they also hold its earlier statements' until flushed).
    const { folded, scans } = await db().transaction(async (trx: Knex.Transaction) => {
      const scansOfLogs = async () => (await trx.raw("SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables WHERE relname = 'logs'")).rows[0]
      const before = await scansOfLogs()
      const folded = await foldLogEntities(txOf(trx), 2_000)
      const after = await scansOfLogs()
      return { folded, scans: { seq_scan: after.seq_scan - before.seq_scan, idx_scan: after.idx_scan - before.idx_scan } }
    })
    expect(folded).toBe(2_000)
    expect(await mark()).toBe(2_000)
    expect(scans.seq_scan).toBe(0)
    expect(scans.idx_scan).toBeGreaterThan(0)
    while ((await fold(5_000)) > 0);
    expect(await mark()).toBe(20_000)
    expect(await indexed()).toEqual(Array.from({ length: 20_000 }, (_, i) => i + 1))
  })

  it('steps over a gap in the seq numbers wider than its range, and stops at the newest entry', async () => {
    await insertEntries(20_001, 20_010)
    await insertEntries(90_000, 90_004)
    expect(await fold(100)).toBe(10)
    expect(await mark()).toBe(20_010)
    expect(await fold(100)).toBe(5)
    expect(await mark()).toBe(90_004)
    expect(await fold(100)).toBe(0)
    expect(await mark()).toBe(90_004)
    expect((await indexed()).slice(-15)).toEqual([...Array.from({ length: 10 }, (_, i) => 20_001 + i), 90_000, 90_001, 90_002, 90_003, 90_004])
  })
})
