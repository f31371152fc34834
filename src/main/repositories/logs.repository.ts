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
  const query = db('logs').where('tenant_id', filter.tenantId)
  if (filter.entityType !== undefined) query.andWhere('entity_type', filter.entityType)
  if (filter.entityId !== undefined) query.andWhere('entity_id', filter.entityId)
  if (filter.startDate !== undefined) query.andWhere('created_at', '>=', filter.startDate)
  if (filter.endDate !== undefined) query.andWhere('created_at', '<', filter.endDate)
  return query
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
