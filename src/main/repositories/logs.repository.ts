import type { Knex } from 'knex'
import { insertRows, type Db } from '../db/sql'


export interface LogRow {
  tenant_id: string
  actor_id: string | null
  actor_type: string | null
  entity_type: string
  entity_id: string
  operation: string
  message: string
  created_at: number
}

export interface LogFilter {
  tenantId: string
  entityType?: string
  entityId?: string
  startDate?: number
  endDate?: number
}

export const LOG_COLUMNS: (keyof LogRow)[] = ['tenant_id', 'actor_id', 'actor_type', 'entity_type', 'entity_id', 'operation', 'message', 'created_at']

export async function insertLogs(db: Db, rows: LogRow[]): Promise<void> {
  await insertRows(db, 'logs', LOG_COLUMNS, rows)
}

function filtered(db: Db, filter: LogFilter): Knex.QueryBuilder {
  const byEntity = filter.entityType !== undefined || filter.entityId !== undefined
  // By entity: the entries up to the folded mark come from log_entities, the rest from the tail of `logs`
  // (rowid lookups and a rowid range). The unary + keeps SQLite from scanning the tenant's whole log
  // through the (tenant_id, created_at) index instead, which it would prefer without statistics.
  const query = byEntity ? db('logs').whereRaw('+tenant_id = ?', [filter.tenantId]) : db('logs').where('tenant_id', filter.tenantId)
  if (filter.entityType !== undefined) query.andWhere('entity_type', filter.entityType)
  if (filter.entityId !== undefined) query.andWhere('entity_id', filter.entityId)
  if (byEntity) query.andWhere((q) => q.whereIn('seq', entitySeqs(db, filter)).orWhere('seq', '>', foldedThrough(db)))
  if (filter.startDate !== undefined) query.andWhere('created_at', '>=', filter.startDate)
  if (filter.endDate !== undefined) query.andWhere('created_at', '<', filter.endDate)
  return query
}

/** The entries of an entity up to the folded mark, through `log_entities`. */
function entitySeqs(db: Db, filter: LogFilter): Knex.QueryBuilder {
  const query = db('log_entities').select('seq').where('tenant_id', filter.tenantId)
  if (filter.entityType !== undefined) query.andWhere('entity_type', filter.entityType)
  if (filter.entityId !== undefined) query.andWhere('entity_id', filter.entityId)
  return query
}

function foldedThrough(db: Db): Knex.QueryBuilder {
  return db('log_entity_index').select('folded_through')
}

/**
 * Adds up to `limit` entries past the folded mark to `log_entities`, sorted by
 * its key so each page of it is written once per fold, and moves the mark.
 * Returns how many it added.
 */
export async function foldLogEntities(trx: Knex.Transaction, limit: number): Promise<number> {
  const [{ folded_through: from }] = await foldedThrough(trx)
  const chunk = trx('logs').select('tenant_id', 'entity_type', 'entity_id', 'seq').where('seq', '>', from).orderBy('seq').limit(limit)
  const [{ last, count }] = await trx.from(chunk.clone().as('chunk')).max({ last: 'seq' }).count({ count: '*' })
  if (Number(count) === 0) return 0
  await trx.raw('INSERT INTO log_entities (tenant_id, entity_type, entity_id, seq) SELECT * FROM (?) ORDER BY 1, 2, 3, 4', [chunk])
  await trx('log_entity_index').update({ folded_through: Number(last) })
  return Number(count)
}

export async function countLogs(db: Db, filter: LogFilter): Promise<number> {
  const row = await filtered(db, filter).count({ count: '*' }).first()
  return Number(row?.count ?? 0)
}

/** Newest first; `seq` breaks ties between entries of the same millisecond. */
export async function listLogs(db: Db, filter: LogFilter, limit: number, offset: number): Promise<LogRow[]> {
  return filtered(db, filter)
    .select('tenant_id', 'actor_id', 'actor_type', 'entity_type', 'entity_id', 'operation', 'message', 'created_at')
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'seq', order: 'desc' }])
    .limit(limit)
    .offset(offset)
}
