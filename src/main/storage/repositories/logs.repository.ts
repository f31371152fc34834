import type { Knex } from 'knex'
import { sql, type Db, type Tx } from '../connections'
import { cappedCount, insertRows, type AddOnConflict } from '../sql'
import type { RowBuffer } from '../write-queue'
import { tenantKeys, type TenantKeys } from '../tenant-keys'
import { uuidBytes, uuidText } from '../uuid-bytes'
import type { ActorType } from '../../domain/actor'


export interface LogRow {
  /** Position in the audit chain; assigned by the writer as the row is sealed. */
  seq?: number
  tenant_id: string
  actor_id: string | null
  actor_type: string | null
  entity_type: string
  entity_id: string
  operation: string
  message: string
  created_at: number
  /** How many events an aggregated entry stands for (refused requests); null for one. */
  count: number | null
  /** MAC over the entry and its predecessor's MAC; assigned by the writer as the row is sealed. */
  mac?: Buffer
}

/** A stored entry with everything its MAC covers. */
export type ChainedLogRow = Required<Omit<LogRow, 'mac'>> & { mac: Buffer | null }

export interface ChainCheckpoint {
  checkpoint_seq: number
  checkpoint_mac: Buffer
  /** Where the stored chain starts: the last archived entry (seq 0 and no MAC when nothing was archived). */
  anchor_seq: number
  anchor_mac: Buffer | null
  checkpoint_tag: Buffer
}

export interface LogFilter {
  tenantId: string
  entityType?: string
  entityId?: string
  startDate?: number
  endDate?: number
}

/**
 * An entry's columns as stored: the tenant's key (storage/tenant-keys.ts) stands for its id,
 * `actor` is the actor id's bytes and `actor_type_code` the actor type's code.
 */
const ENTRY_COLUMNS = ['tenant_key', 'actor', 'actor_type_code', 'entity_type', 'entity_id', 'operation', 'message', 'created_at', 'count'] as const

const LOG_COLUMNS = ['seq', ...ENTRY_COLUMNS, 'mac'] as const

const ACTOR_TYPE_CODES: Record<ActorType, number> = { application: 1, session: 2, user: 3 }
const ACTOR_TYPES = new Map(Object.entries(ACTOR_TYPE_CODES).map(([type, code]) => [code, type]))

function actorTypeCode(type: string | null): number | null {
  if (type === null) return null
  const code = ACTOR_TYPE_CODES[type as ActorType]
  if (code === undefined) throw new TypeError(`Unknown actor type ${type}`)
  return code
}

/** An unknown code (an altered entry) reads as one no entry holds, so its MAC fails to verify. */
const actorTypeOf = (code: number | null) => (code === null ? null : (ACTOR_TYPES.get(Number(code)) ?? `unknown code ${code}`))

/** The stored, compact forms of the tenant and the actor. */
interface StoredForms {
  tenant_key: number
  actor: Buffer | null
  actor_type_code: number | null
}

/** An entry with the stored forms beside the values they stand for: the MAC covers the values, the table holds the compact forms. */
type StoredLogRow = LogRow & StoredForms

const toStored = (keys: TenantKeys, entries: readonly LogRow[]): StoredLogRow[] =>
  entries.map((entry) => ({ ...entry, tenant_key: keys.keyOf(entry.tenant_id), actor: uuidBytes(entry.actor_id), actor_type_code: actorTypeCode(entry.actor_type) }))

/** A stored entry as the layers above see it: with its tenant's and actor's ids and the actor's type. */
function fromStored<T extends StoredForms>(keys: TenantKeys, { tenant_key, actor, actor_type_code, ...row }: T): Omit<T, keyof StoredForms> & Pick<LogRow, 'tenant_id' | 'actor_id' | 'actor_type'> {
  return { tenant_id: keys.idOf(tenant_key), actor_id: uuidText(actor), actor_type: actorTypeOf(actor_type_code), ...row }
}

const LOG_COUNT_COLUMNS = ['tenant_key', 'entity_type', 'count'] as const
const LOG_COUNTER: AddOnConflict = { key: ['tenant_key', 'entity_type'], column: 'count' }

/** One `log_counts` row per entry, added up per tenant and entity type as they are written. */
const countRows = (entries: readonly StoredLogRow[]) => entries.map((entry) => ({ tenant_key: entry.tenant_key, entity_type: entry.entity_type, count: 1 }))

/** Writes entries the caller has sealed already (the vault's first entries, before any write queue). */
export async function insertLogs(db: Db, rows: LogRow[]): Promise<void> {
  const stored = toStored(tenantKeys(db), rows)
  await insertRows(sql(db), 'logs', LOG_COLUMNS, stored)
  await insertRows(sql(db), 'log_counts', LOG_COUNT_COLUMNS, countRows(stored), LOG_COUNTER)
}

/**
 * Queues entries for the batch's multi-row insert; the write queue's sealer stamps them (seq and MAC) in commit order.
 * The tenant's entry counts move in the same commit.
 */
export function appendLogEntries(rows: RowBuffer, entries: readonly LogRow[]): void {
  const stored = toStored(rows.tenantKeys, entries)
  rows.insert('logs', LOG_COLUMNS, stored, { sealed: true })
  rows.insert('log_counts', LOG_COUNT_COLUMNS, countRows(stored), { addTo: LOG_COUNTER })
}

function filtered(db: Db, filter: LogFilter): Knex.QueryBuilder {
  const byEntityId = filter.entityId !== undefined
  // By entity id: the entries up to the folded mark come from log_entities, the rest from the tail of `logs`
  // (rowid lookups and a rowid range). The unary + keeps SQLite from scanning the tenant's whole log
  // through the (tenant_key, created_at) index instead, which it would prefer without statistics.
  // Otherwise (tenant_key, entity_type, created_at) or (tenant_key, created_at) give the entries in list order.
  const tenantKey = tenantKeys(db).keyOf(filter.tenantId)
  const query = byEntityId ? sql(db)('logs').whereRaw('+tenant_key = ?', [tenantKey]) : sql(db)('logs').where('tenant_key', tenantKey)
  if (filter.entityId !== undefined) query.andWhere('entity_id', filter.entityId)
  if (byEntityId) query.andWhere((q) => q.whereIn('seq', entitySeqs(db, filter)).orWhere('seq', '>', foldedThrough(db)))
  if (filter.entityType !== undefined && !byEntityId && hasDates(filter)) {
    // One range of (entity_type, created_at): with the type and the dates apart, SQLite would rather range over the time index alone.
    query.andWhereRaw('(entity_type, created_at) >= (?, ?) and (entity_type, created_at) < (?, ?)', [
      filter.entityType,
      filter.startDate ?? Number.MIN_SAFE_INTEGER,
      filter.entityType,
      filter.endDate ?? Number.MAX_SAFE_INTEGER
    ])
    return query
  }
  if (filter.entityType !== undefined) query.andWhere('entity_type', filter.entityType)
  if (filter.startDate !== undefined) query.andWhere('created_at', '>=', filter.startDate)
  if (filter.endDate !== undefined) query.andWhere('created_at', '<', filter.endDate)
  return query
}

const hasDates = (filter: LogFilter) => filter.startDate !== undefined || filter.endDate !== undefined

/** Newest first, as the index the filter searches delivers them (the type leads the type-and-dates range). */
function listOrder(filter: LogFilter): { column: string; order: 'desc' }[] {
  const columns = filter.entityType !== undefined && filter.entityId === undefined && hasDates(filter) ? ['entity_type', 'created_at', 'seq'] : ['created_at', 'seq']
  return columns.map((column) => ({ column, order: 'desc' }))
}

/** The entries of an entity up to the folded mark, through `log_entities`. */
function entitySeqs(db: Db, filter: LogFilter): Knex.QueryBuilder {
  const tenantKey = tenantKeys(db).keyOf(filter.tenantId)
  const query = sql(db)('log_entities').select('seq').where('tenant_key', tenantKey)
  if (filter.entityType !== undefined) query.andWhere('entity_type', filter.entityType)
  // Without a type, each entity type the tenant's log holds (from its counters): the index leads with the type.
  else query.whereIn('entity_type', sql(db)('log_counts').select('entity_type').where('tenant_key', tenantKey))
  if (filter.entityId !== undefined) query.andWhere('entity_id', filter.entityId)
  return query
}

function foldedThrough(db: Db): Knex.QueryBuilder {
  return sql(db)('log_entity_index').select('folded_through')
}

/**
 * Adds up to `limit` entries past the folded mark to `log_entities`, sorted by
 * its key so each page of it is written once per fold, and moves the mark.
 * Returns how many it added.
 */
export async function foldLogEntities(trx: Tx, limit: number): Promise<number> {
  const [{ folded_through: from }] = await foldedThrough(trx)
  const chunk = sql(trx)('logs').select('tenant_key', 'entity_type', 'entity_id', 'seq').where('seq', '>', from).orderBy('seq').limit(limit)
  const [{ last, count }] = await sql(trx).from(chunk.clone().as('chunk')).max({ last: 'seq' }).count({ count: '*' })
  if (Number(count) === 0) return 0
  await sql(trx).raw('INSERT INTO log_entities (tenant_key, entity_type, entity_id, seq) SELECT * FROM (?) ORDER BY 1, 2, 3, 4', [chunk])
  await sql(trx)('log_entity_index').update({ folded_through: Number(last) })
  return Number(count)
}

/**
 * How many entries match: from the tenant's counters without an entity id or dates,
 * else counted through the index up to `COUNTED_ITEMS_LIMIT + 1` (standing for more).
 */
export async function countLogs(db: Db, filter: LogFilter): Promise<number> {
  if (filter.entityId === undefined && filter.startDate === undefined && filter.endDate === undefined) {
    const counted = sql(db)('log_counts').sum({ count: 'count' }).where('tenant_key', tenantKeys(db).keyOf(filter.tenantId))
    if (filter.entityType !== undefined) counted.andWhere('entity_type', filter.entityType)
    const [{ count }] = await counted
    return Number(count ?? 0)
  }
  return cappedCount(sql(db), filtered(db, filter))
}

/**
 * How many entries match `filter` in each `[start, end)` period (epoch ms), in one
 * query grouped by period; the periods replace the filter's own date range.
 */
export async function countLogsByPeriod(db: Db, filter: LogFilter, periods: readonly (readonly [number, number])[]): Promise<number[]> {
  if (periods.length === 0) return []
  const entries = filtered(db, { ...filter, startDate: Math.min(...periods.map(([start]) => start)), endDate: Math.max(...periods.map(([, end]) => end)) }).select('created_at')
  const result = await sql(db).raw(
    `WITH periods (idx, period_start, period_end) AS (VALUES ${periods.map(() => '(?, ?, ?)').join(', ')})
     SELECT periods.idx AS idx, count(entries.created_at) AS count
     FROM periods LEFT JOIN (?) AS entries ON entries.created_at >= periods.period_start AND entries.created_at < periods.period_end
     GROUP BY periods.idx ORDER BY periods.idx`,
    [...periods.flatMap(([start, end], index) => [index, start, end]), entries]
  )
  // sqlite3 answers with the rows, pg with `{ rows }`.
  const rows: { count: number | string }[] = Array.isArray(result) ? result : result.rows
  return rows.map((row) => Number(row.count))
}

/** Newest first; `seq` breaks ties between entries of the same millisecond. */
export async function listLogs(db: Db, filter: LogFilter, limit: number, offset: number): Promise<LogRow[]> {
  const rows: (Omit<LogRow, 'tenant_id' | 'actor_id' | 'actor_type'> & StoredForms)[] = await filtered(db, filter)
    .select(...ENTRY_COLUMNS)
    .orderBy(listOrder(filter))
    .limit(limit)
    .offset(offset)
  const keys = tenantKeys(db)
  return rows.map((row) => fromStored(keys, row))
}

/** Entries in chain order after `afterSeq`, with their MACs. */
export async function listChainedLogs(db: Db, afterSeq: number, limit: number, throughSeq = Number.MAX_SAFE_INTEGER): Promise<ChainedLogRow[]> {
  const rows: (Omit<ChainedLogRow, 'tenant_id' | 'actor_id' | 'actor_type'> & StoredForms)[] = await sql(db)('logs')
    .select(...LOG_COLUMNS)
    .where('seq', '>', afterSeq)
    .andWhere('seq', '<=', throughSeq)
    .orderBy('seq')
    .limit(limit)
  const keys = tenantKeys(db)
  return rows.map((row) => fromStored(keys, row))
}

/** The newest entry's seq and MAC, if any. */
export async function lastChainedLog(db: Db): Promise<{ seq: number; mac: Buffer | null } | undefined> {
  return sql(db)('logs').select('seq', 'mac').orderBy('seq', 'desc').first()
}

/** The entry just before `seq` in chain order. */
export async function chainedLogBefore(db: Db, seq: number): Promise<{ seq: number; mac: Buffer | null } | undefined> {
  return sql(db)('logs').select('seq', 'mac').where('seq', '<', seq).orderBy('seq', 'desc').first()
}

/** Whether any entry carries a MAC. */
export async function hasChainedLogs(db: Db): Promise<boolean> {
  return (await sql(db)('logs').select('seq').whereNotNull('mac').first()) !== undefined
}

/** Stores MACs computed for existing entries (the audit chain's upgrade), up to 500 per statement. */
export async function setLogMacs(trx: Tx, macs: { seq: number; mac: Buffer }[]): Promise<void> {
  for (let start = 0; start < macs.length; start += 500) {
    const chunk = macs.slice(start, start + 500)
    const cases = chunk.map(() => 'when ? then ?').join(' ')
    const bindings = chunk.flatMap(({ seq, mac }) => [seq, mac])
    await sql(trx).raw(`update logs set mac = case seq ${cases} end where seq in (${chunk.map(() => '?').join(',')})`, [...bindings, ...chunk.map(({ seq }) => seq)])
  }
}

/** The first and last seq of the entries from `since` (inclusive) to `until` (exclusive). */
export async function logSeqRange(db: Db, since?: number, until?: number): Promise<{ first: number; last: number } | undefined> {
  const first = sql(db)('logs').min({ seq: 'seq' })
  if (since !== undefined) first.where('created_at', '>=', since)
  const last = sql(db)('logs').max({ seq: 'seq' })
  if (until !== undefined) last.where('created_at', '<', until)
  const [[{ seq: from }], [{ seq: to }]] = await Promise.all([first, last])
  return from === null || to === null || Number(from) > Number(to) ? undefined : { first: Number(from), last: Number(to) }
}

export async function findChainCheckpoint(db: Db): Promise<ChainCheckpoint | undefined> {
  return sql(db)('log_chain').select('checkpoint_seq', 'checkpoint_mac', 'anchor_seq', 'anchor_mac', 'checkpoint_tag').first()
}

export async function saveChainCheckpoint(trx: Tx, checkpoint: ChainCheckpoint): Promise<void> {
  await sql(trx)('log_chain').del()
  await sql(trx)('log_chain').insert(checkpoint)
}
