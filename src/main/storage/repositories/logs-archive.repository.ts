/**
 * The audit log's archive: which entries an archive takes, and pruning them
 * once they are safely exported (see app/audit-archive.ts).
 */
import { sql, type Db, type Tx } from '../connections'
import { foldsEntityIndex } from '../dialect'
import { HOUR } from './logs.repository'

/**
 * The entries an archive of everything created before `before` (epoch ms)
 * takes: from the one after `anchorSeq` up to, not including, the first entry
 * created at or after `before`, so none that new is ever archived (even if the
 * clock once went backwards). At most `limit` entries.
 */
export async function archiveRange(db: Db, before: number, anchorSeq: number, limit = Number.MAX_SAFE_INTEGER): Promise<{ first: number; last: number } | undefined> {
  const [{ seq: firstKept }] = await sql(db)('logs').min({ seq: 'seq' }).where('seq', '>', anchorSeq).andWhere('created_at', '>=', before)
  const [{ seq: newest }] = await sql(db)('logs').max({ seq: 'seq' }).where('seq', '>', anchorSeq)
  if (newest === null) return undefined
  const last = Math.min(firstKept === null ? Number(newest) : Number(firstKept) - 1, anchorSeq + limit)
  return last > anchorSeq ? { first: anchorSeq + 1, last } : undefined
}

/** The MAC of the entry at `seq`, if it is there. */
export async function logMacAt(db: Db, seq: number): Promise<Buffer | undefined> {
  const row = await sql(db)('logs').select('mac').where('seq', seq).first()
  return row?.mac ?? undefined
}

/**
 * Deletes every entry up to `throughSeq` and its entity index rows; returns
 * how many entries went. The one place log rows are deleted: anything kept
 * per entry elsewhere (counters) is adjusted here, in the same transaction.
 */
export async function deleteLogsThrough(trx: Tx, throughSeq: number): Promise<number> {
  // By key, row by row: log_entities is keyed by entity first, so a condition on seq alone would scan all of it.
  if (foldsEntityIndex(sql(trx))) {
    await sql(trx).raw(
      `DELETE FROM log_entities WHERE (tenant_key, entity_type, entity_id, created_at, seq) IN
         (SELECT tenant_key, entity_type, entity_id, created_at, seq FROM logs WHERE seq <= ?)`,
      [throughSeq]
    )
  }
  // The counters behind the unfiltered and per-type totals, and the activity chart's, lose what goes.
  await sql(trx).raw(
    `UPDATE log_counts SET count = log_counts.count - pruned.pruned_count
       FROM (SELECT tenant_key, entity_type, count(*) AS pruned_count FROM logs WHERE seq <= ? GROUP BY tenant_key, entity_type) AS pruned
      WHERE log_counts.tenant_key = pruned.tenant_key AND log_counts.entity_type = pruned.entity_type`,
    [throughSeq]
  )
  await sql(trx).raw(
    `UPDATE log_hour_counts SET count = log_hour_counts.count - pruned.pruned_count
       FROM (SELECT tenant_key, created_at / ${HOUR} AS hour, entity_type, count(*) AS pruned_count FROM logs WHERE seq <= ?
              GROUP BY tenant_key, created_at / ${HOUR}, entity_type) AS pruned
      WHERE log_hour_counts.tenant_key = pruned.tenant_key AND log_hour_counts.hour = pruned.hour AND log_hour_counts.entity_type = pruned.entity_type`,
    [throughSeq]
  )
  await sql(trx)('log_hour_counts').where('count', 0).del()
  return sql(trx)('logs').where('seq', '<=', throughSeq).del()
}
