import type { Knex } from 'knex'
import { sql, type Db, type Tx } from '../connections'
import { AUDIT_CHAIN_LOCK, engineOf, foldsEntityIndex, storesMessageCodes } from '../dialect'
import { COUNTED_ITEMS_LIMIT } from '../../../shared/pagination'
import { cappedCount, insertRows, type AddOnConflict } from '../sql'
import type { RowBuffer, RunScript } from '../write-queue'
import type { ScriptGuard } from '../sql-script'
import { tenantKeys, type TenantKeys } from '../tenant-keys'
import { uuidBytes, uuidText } from '../uuid-bytes'
import { traceBytes, traceText } from '../trace-bytes'
import { messageText, storedMessage } from '../message-codes'
import type { ActorType } from '../../domain/actor'
import type { AuditEntry } from '../../domain/audit-entry'

export interface LogRow extends AuditEntry {
  /** Position in the audit chain; assigned by the writer as the row is sealed. */
  seq?: number
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
 * `actor` is the actor id's bytes, `actor_type_code` the actor type's code, `trace` the trace id's bytes (trace-bytes.ts)
 * and `message` a catalogued message's code or any other message's text (message-codes.ts).
 */
const ENTRY_COLUMNS = ['tenant_key', 'actor', 'actor_type_code', 'entity_type', 'entity_id', 'operation', 'message', 'created_at', 'count', 'trace'] as const

const LOG_COLUMNS = ['seq', ...ENTRY_COLUMNS, 'mac'] as const
/** Where a row being written holds each column's value: the message's stored form beside its text, which the MAC covers. */
const LOG_PROPERTIES = LOG_COLUMNS.map((column) => (column === 'message' ? 'stored_message' : column))

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

/** The stored, compact forms of the tenant, the actor, the trace id and the message, as their columns hold them. */
interface StoredForms {
  tenant_key: number
  actor: Buffer | null
  actor_type_code: number | null
  trace: Buffer | null
  message: string | Buffer
}

/** The values the stored forms stand for. */
type StoredValues = Pick<LogRow, 'tenant_id' | 'actor_id' | 'actor_type' | 'message'> & { trace_id: string | null }

/**
 * An entry with the stored forms beside the values they stand for: the MAC covers the values, the table holds
 * the compact forms (the message's as `stored_message`, its text keeping the name the MAC reads).
 */
type StoredLogRow = LogRow & Omit<StoredForms, 'message'> & { stored_message: string | Buffer }

/**
 * The entries of one call mostly share their actor and trace id (a page's reads: 100 entries,
 * one actor, one request), so an id's bytes are computed once per run of it and the Buffer shared by
 * the rows, which only read it.
 */
function toStored(keys: TenantKeys, messageCodes: boolean, entries: readonly LogRow[]): StoredLogRow[] {
  const actors = new IdBytes(uuidBytes)
  const traces = new IdBytes(traceBytes)
  const messages = messageCodes ? storedMessage : (text: string) => text
  return entries.map((entry) => storedRow(keys, entry, actors, traces, messages))
}

/** The bytes of the id seen last, kept for the next entry. */
class IdBytes<Id> {
  private seen = false
  private id: Id | undefined
  private bytes: Buffer | null = null

  constructor(private readonly toBytes: (id: Id) => Buffer | null) {}

  of(id: Id): Buffer | null {
    if (!this.seen || id !== this.id) {
      this.bytes = this.toBytes(id)
      this.id = id
      this.seen = true
    }
    return this.bytes
  }
}

/**
 * Field by field, `seq` and `mac` included even before the sealer stamps them: an object
 * spread with added properties costs V8 about a microsecond per entry, and stamping
 * properties the object lacks changes its shape on every entry of every commit.
 */
function storedRow(
  keys: TenantKeys,
  entry: LogRow,
  actors: IdBytes<string | null>,
  traces: IdBytes<string | null | undefined>,
  messages: (text: string) => string | Buffer
): StoredLogRow {
  return {
    seq: entry.seq,
    tenant_id: entry.tenant_id,
    actor_id: entry.actor_id,
    actor_type: entry.actor_type,
    entity_type: entry.entity_type,
    entity_id: entry.entity_id,
    operation: entry.operation,
    message: entry.message,
    created_at: entry.created_at,
    count: entry.count,
    trace_id: entry.trace_id,
    mac: entry.mac,
    tenant_key: keys.keyOf(entry.tenant_id),
    actor: actors.of(entry.actor_id),
    actor_type_code: actorTypeCode(entry.actor_type),
    trace: traces.of(entry.trace_id),
    stored_message: messages(entry.message)
  }
}

/** A stored entry as the layers above see it: with its tenant's and actor's ids, the actor's type, the trace id and the message's text. */
function fromStored<T extends StoredForms>(keys: TenantKeys, { tenant_key, actor, actor_type_code, trace, message, ...row }: T): Omit<T, keyof StoredForms> & StoredValues {
  return { tenant_id: keys.idOf(tenant_key), actor_id: uuidText(actor), actor_type: actorTypeOf(actor_type_code), trace_id: traceText(trace), message: messageText(message), ...row }
}

const LOG_COUNT_COLUMNS = ['tenant_key', 'entity_type', 'count'] as const
const LOG_COUNTER: AddOnConflict = { key: ['tenant_key', 'entity_type'], column: 'count' }

/** The hour an entry is counted in by `log_hour_counts`: its `created_at` divided by this, rounded down. */
export const HOUR = 3_600_000
const hourOf = (createdAt: number) => Math.floor(createdAt / HOUR)

const LOG_HOUR_COUNT_COLUMNS = ['tenant_key', 'hour', 'entity_type', 'count'] as const
const LOG_HOUR_COUNTER: AddOnConflict = { key: ['tenant_key', 'hour', 'entity_type'], column: 'count' }

/**
 * Counter rows of entries, one per run of consecutive entries that `same` puts on `rowOf`'s row
 * (a bulk tokenize's thousand entries share theirs), so the batch has few rows to add up as it writes them.
 */
function counterRows<R extends { count: number }>(entries: readonly StoredLogRow[], rowOf: (entry: StoredLogRow) => R, same: (row: R, entry: StoredLogRow) => boolean): R[] {
  const rows: R[] = []
  let last: R | undefined
  for (const entry of entries) {
    if (last && same(last, entry)) last.count++
    else rows.push((last = rowOf(entry)))
  }
  return rows
}

/** `log_counts` rows: per tenant and entity type. */
const countRows = (entries: readonly StoredLogRow[]) =>
  counterRows(
    entries,
    (entry) => ({ tenant_key: entry.tenant_key, entity_type: entry.entity_type, count: 1 }),
    (row, entry) => row.tenant_key === entry.tenant_key && row.entity_type === entry.entity_type
  )

/** `log_hour_counts` rows: per tenant, hour and entity type. */
const hourCountRows = (entries: readonly StoredLogRow[]) =>
  counterRows(
    entries,
    (entry) => ({ tenant_key: entry.tenant_key, hour: hourOf(entry.created_at), entity_type: entry.entity_type, count: 1 }),
    (row, entry) => row.tenant_key === entry.tenant_key && row.hour === hourOf(entry.created_at) && row.entity_type === entry.entity_type
  )

/** Writes entries the caller has sealed already (the vault's first entries, before any write queue). */
export async function insertLogs(db: Db, rows: LogRow[]): Promise<void> {
  const stored = toStored(tenantKeys(db), storesMessageCodes(engineOf(sql(db))), rows)
  await insertRows(sql(db), 'logs', LOG_COLUMNS, stored, undefined, LOG_PROPERTIES)
  await insertRows(sql(db), 'log_counts', LOG_COUNT_COLUMNS, countRows(stored), LOG_COUNTER)
  await insertRows(sql(db), 'log_hour_counts', LOG_HOUR_COUNT_COLUMNS, hourCountRows(stored), LOG_HOUR_COUNTER)
}

/**
 * Queues entries for the batch's multi-row insert; the write queue's sealer stamps them (seq and MAC) in commit order.
 * The tenant's entry counters move in the same commit.
 */
export function appendLogEntries(rows: RowBuffer, entries: readonly LogRow[]): void {
  const stored = toStored(rows.tenantKeys, storesMessageCodes(rows.engine), entries)
  rows.insert('logs', LOG_COLUMNS, stored, { sealed: true, properties: LOG_PROPERTIES })
  rows.insert('log_counts', LOG_COUNT_COLUMNS, countRows(stored), { addTo: LOG_COUNTER })
  rows.insert('log_hour_counts', LOG_HOUR_COUNT_COLUMNS, hourCountRows(stored), { addTo: LOG_HOUR_COUNTER })
}

const hasDates = (filter: LogFilter) => filter.startDate !== undefined || filter.endDate !== undefined

/**
 * The entries of a filter without an entity id, through (tenant_key, entity_type, created_at)
 * or (tenant_key, created_at), which give them in list order.
 */
function filtered(db: Db, filter: LogFilter): Knex.QueryBuilder {
  const query = sql(db)('logs').where('tenant_key', tenantKeys(db).keyOf(filter.tenantId))
  if (filter.entityType !== undefined && hasDates(filter)) {
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
  return withinDates(query, filter, 'created_at')
}

function withinDates(query: Knex.QueryBuilder, filter: LogFilter, column: string): Knex.QueryBuilder {
  if (filter.startDate !== undefined) query.andWhere(column, '>=', filter.startDate)
  if (filter.endDate !== undefined) query.andWhere(column, '<', filter.endDate)
  return query
}

const descending = (columns: string[]) => columns.map((column) => ({ column, order: 'desc' as const }))

/** The list's order: newest first, `seq` breaking ties between entries of the same millisecond. */
const NEWEST_FIRST = descending(['created_at', 'seq'])

/** Newest first, as the index the filter searches delivers them (the type leads the type-and-dates range). */
function listOrder(filter: LogFilter): { column: string; order: 'desc' }[] {
  return filter.entityType !== undefined && hasDates(filter) ? descending(['entity_type', 'created_at', 'seq']) : NEWEST_FIRST
}

/**
 * The entity types whose `log_entities` ranges may hold an entity: the filter's, or each type the tenant's log holds
 * (from its counters). None where the entity index is not folded: there one range holds an entity's entries of every type.
 */
async function entityTypesOf(db: Db, filter: LogFilter): Promise<string[]> {
  if (!foldsEntityIndex(sql(db))) return []
  if (filter.entityType !== undefined) return [filter.entityType]
  return sql(db)('log_counts').where('tenant_key', tenantKeys(db).keyOf(filter.tenantId)).orderBy('entity_type').pluck('entity_type')
}

/** What an entity arm selects: the entries themselves, or their seq alone (to count them). */
type EntityColumns = 'entries' | 'seq'

/** The columns `log_entities` holds are taken from it, so the merge follows its key order; the rest from `logs`. */
const FOLDED_ENTRY_COLUMNS = ENTRY_COLUMNS.map((column) => (['tenant_key', 'entity_type', 'entity_id', 'created_at'].includes(column) ? `log_entities.${column}` : `logs.${column}`))

/**
 * An entity's entries as one SELECT per source, to be combined by UNION ALL.
 * Where the entity index is folded (SQLite):
 * - for each entity type, its entries up to the folded mark: one range of the
 *   `log_entities` key (tenant_key, entity_type, entity_id, created_at, seq),
 *   newest first, each joined to its row in `logs` by seq;
 * - the entries past the folded mark, from the tail of `logs` (a seq range the sweep keeps short).
 * Ordered by (created_at, seq), the union merges the sorted ranges and stops at the page.
 * Otherwise (PostgreSQL) one range of `logs`' index (tenant_key, entity_id, created_at, seq) holds them all.
 */
function entityArms(db: Db, filter: LogFilter, types: readonly string[], columns: EntityColumns): Knex.QueryBuilder[] {
  const tenantKey = tenantKeys(db).keyOf(filter.tenantId)
  if (!foldsEntityIndex(sql(db))) {
    const arm = sql(db)('logs').where({ tenant_key: tenantKey, entity_id: filter.entityId! })
    // The type through an expression: on the column itself a table without statistics yet (a new team vault) may be
    // read through the tenant's (tenant_key, entity_type, created_at) index, every entry of the type, not the entity's range.
    if (filter.entityType !== undefined) arm.andWhereRaw("entity_type || '' = ?", [filter.entityType])
    return [withinDates(arm.select(...(columns === 'entries' ? [...ENTRY_COLUMNS, 'seq'] : ['seq'])), filter, 'created_at')]
  }
  const folded = types.map((type) => {
    const arm = sql(db)('log_entities').where('log_entities.tenant_key', tenantKey).andWhere('log_entities.entity_type', type).andWhere('log_entities.entity_id', filter.entityId!)
    if (columns === 'entries') arm.join('logs', 'logs.seq', 'log_entities.seq').select(...FOLDED_ENTRY_COLUMNS, 'log_entities.seq')
    else arm.select('log_entities.seq')
    return withinDates(arm, filter, 'log_entities.created_at')
  })
  const tail = sql(db)('logs')
    .where('seq', '>', foldedThrough(db))
    // The tenant through an expression: on the column itself SQLite would walk one of the tenant's
    // (tenant_key, …) indexes, all of the tenant's entries, rather than the tail's seq range.
    .andWhereRaw('tenant_key + 0 = ?', [tenantKey])
    .andWhere('entity_id', filter.entityId!)
  if (filter.entityType !== undefined) tail.andWhere('entity_type', filter.entityType)
  tail.select(...(columns === 'entries' ? [...ENTRY_COLUMNS, 'seq'] : ['seq']))
  return [...folded, withinDates(tail, filter, 'created_at')]
}

function unionAll([first, ...rest]: Knex.QueryBuilder[]): Knex.QueryBuilder {
  return rest.length ? first.unionAll(rest) : first
}

function foldedThrough(db: Db): Knex.QueryBuilder {
  return sql(db)('log_entity_index').select('folded_through')
}

/**
 * Adds the entries of `limit` seq numbers from the first one past the folded mark to
 * `log_entities`, sorted by its key so each page of it is written once per
 * fold, and moves the mark to the last of them. Returns how many it added.
 *
 * The chunk is a seq range bounded on both sides, not "the next `limit` in seq
 * order": PostgreSQL plans the bounded range through the primary key whatever
 * its statistics say, while for the open-ended form on a table not yet analysed
 * (a new team vault under load) it chose a scan of the whole log, every fold.
 * Seq numbers have gaps (a PostgreSQL sequence skips what a rolled-back
 * transaction took), so the range starts at the next entry past the mark.
 */
export async function foldLogEntities(trx: Tx, limit: number): Promise<number> {
  if (!foldsEntityIndex(sql(trx))) return 0
  const [{ folded_through: mark }] = await foldedThrough(trx)
  const [{ next }] = await sql(trx)('logs').min({ next: 'seq' }).where('seq', '>', mark)
  if (next === null) return 0
  const from = Number(next) - 1
  const range = await entriesBetween(trx, from, from + limit)
  await sql(trx).raw('INSERT INTO log_entities (tenant_key, entity_type, entity_id, created_at, seq) SELECT * FROM (?) AS chunk ORDER BY 1, 2, 3, 4, 5', [
    sql(trx)('logs').select('tenant_key', 'entity_type', 'entity_id', 'created_at', 'seq').where('seq', '>', from).andWhere('seq', '<=', range.last)
  ])
  await sql(trx)('log_entity_index').update({ folded_through: range.last })
  return range.count
}

/** How many entries have `after` < seq ≤ `through`, and the last of them. */
async function entriesBetween(trx: Tx, after: number, through: number): Promise<{ count: number; last: number }> {
  const [{ count, last }] = await sql(trx)('logs').count({ count: '*' }).max({ last: 'seq' }).where('seq', '>', after).andWhere('seq', '<=', through)
  return { count: Number(count), last: Number(last) }
}

/** How many entries (of every tenant) lie past the entity index's mark, from the two ends of the seq range. */
export async function unfoldedLogCount(db: Db): Promise<number> {
  if (!foldsEntityIndex(sql(db))) return 0
  const [{ newest }] = await sql(db)('logs').max({ newest: 'seq' })
  const [{ folded_through: folded }] = await foldedThrough(db)
  return Math.max(0, Number(newest ?? 0) - Number(folded))
}

/**
 * How many entries match: from the tenant's counters without an entity id or dates,
 * else counted through the indexes up to `COUNTED_ITEMS_LIMIT + 1` (standing for more).
 */
export async function countLogs(db: Db, filter: LogFilter): Promise<number> {
  if (filter.entityId !== undefined) return countEntityEntries(db, filter, await entityTypesOf(db, filter), COUNTED_ITEMS_LIMIT + 1)
  if (!hasDates(filter)) {
    const counted = sql(db)('log_counts').sum({ count: 'count' }).where('tenant_key', tenantKeys(db).keyOf(filter.tenantId))
    if (filter.entityType !== undefined) counted.andWhere('entity_type', filter.entityType)
    const [{ count }] = await counted
    return Number(count ?? 0)
  }
  return cappedCount(sql(db), filtered(db, filter))
}

/** An entity's entries, counted in its key ranges (no row of `logs` is read but the tail's), up to `cap`. */
async function countEntityEntries(db: Db, filter: LogFilter, types: readonly string[], cap = Number.MAX_SAFE_INTEGER): Promise<number> {
  const arms = entityArms(db, filter, types, 'seq')
  if (arms.length === 0) return 0
  const matching = unionAll(arms)
  if (cap < Number.MAX_SAFE_INTEGER) matching.limit(cap)
  const [{ count }] = await sql(db).from(matching.as('matching')).count({ count: '*' })
  return Number(count)
}

/**
 * How many entries match `filter` in each `[start, end)` period (epoch ms); the
 * periods replace the filter's own date range. Without an entity id, the whole
 * hours of a period are added up from `log_hour_counts` and only its parts of an
 * hour (none when periods start on the hour) are counted entry by entry; an
 * entity's entries are counted in its key range, period by period.
 */
export async function countLogsByPeriod(db: Db, filter: LogFilter, periods: readonly (readonly [number, number])[]): Promise<number[]> {
  if (periods.length === 0) return []
  const { startDate: _start, endDate: _end, ...undated } = filter
  if (undated.entityId !== undefined) {
    const types = await entityTypesOf(db, undated)
    return Promise.all(periods.map(([startDate, endDate]) => countEntityEntries(db, { ...undated, startDate, endDate }, types)))
  }
  const hourly = await hourlyCounts(db, undated, Math.min(...periods.map(([start]) => start)), Math.max(...periods.map(([, end]) => end)))
  return Promise.all(periods.map((period) => countPeriod(db, undated, period, hourly)))
}

/** Entries per whole hour within [from, to), from the counters (absent: none). */
async function hourlyCounts(db: Db, filter: LogFilter, from: number, to: number): Promise<Map<number, number>> {
  const query = sql(db)('log_hour_counts')
    .select('hour')
    .sum({ count: 'count' })
    .where('tenant_key', tenantKeys(db).keyOf(filter.tenantId))
    .andWhere('hour', '>=', Math.ceil(from / HOUR))
    .andWhere('hour', '<', Math.floor(to / HOUR))
    .groupBy('hour')
  if (filter.entityType !== undefined) query.andWhere('entity_type', filter.entityType)
  const rows = (await query) as unknown as { hour: number | string; count: number | string }[]
  return new Map(rows.map((row) => [Number(row.hour), Number(row.count)]))
}

async function countPeriod(db: Db, filter: LogFilter, [start, end]: readonly [number, number], hourly: Map<number, number>): Promise<number> {
  const firstHour = Math.ceil(start / HOUR)
  const endHour = Math.floor(end / HOUR)
  if (firstHour >= endHour) return countEntries(db, { ...filter, startDate: start, endDate: end })
  let count = 0
  for (let hour = firstHour; hour < endHour; hour++) count += hourly.get(hour) ?? 0
  if (start < firstHour * HOUR) count += await countEntries(db, { ...filter, startDate: start, endDate: firstHour * HOUR })
  if (endHour * HOUR < end) count += await countEntries(db, { ...filter, startDate: endHour * HOUR, endDate: end })
  return count
}

/** Every entry of a filter's date range, uncapped: for less than an hour's entries. */
async function countEntries(db: Db, filter: LogFilter): Promise<number> {
  const [{ count }] = await filtered(db, filter).count({ count: '*' })
  return Number(count)
}

/** A page of the entries matching `filter`, newest first. */
export async function listLogs(db: Db, filter: LogFilter, limit: number, offset: number): Promise<LogRow[]> {
  const arms = filter.entityId !== undefined ? entityArms(db, filter, await entityTypesOf(db, filter), 'entries') : undefined
  if (arms?.length === 0) return [] // a log without entries of any type
  const page = arms ? unionAll(arms).orderBy(NEWEST_FIRST) : filtered(db, filter).select(...ENTRY_COLUMNS).orderBy(listOrder(filter))
  const rows: (Omit<LogRow, keyof StoredValues> & StoredForms)[] = await page.limit(limit).offset(offset)
  const keys = tenantKeys(db)
  return rows.map((row) => fromStored(keys, row))
}

/** Entries in chain order after `afterSeq`, with their MACs. */
export async function listChainedLogs(db: Db, afterSeq: number, limit: number, throughSeq = Number.MAX_SAFE_INTEGER): Promise<ChainedLogRow[]> {
  const rows: (Omit<ChainedLogRow, keyof StoredValues> & StoredForms)[] = await sql(db)('logs')
    .select(...LOG_COLUMNS)
    .where('seq', '>', afterSeq)
    .andWhere('seq', '<=', throughSeq)
    .orderBy('seq')
    .limit(limit)
  const keys = tenantKeys(db)
  return rows.map((row) => fromStored(keys, row))
}

/** What a batch appended to the audit chain continues from: the chain's checkpoint and its newest entry. */
export interface ChainTurn {
  checkpoint: ChainCheckpoint | undefined
  last: { seq: number; mac: Buffer | null } | undefined
}

const CHECKPOINT_COLUMNS = ['checkpoint_seq', 'checkpoint_mac', 'anchor_seq', 'anchor_mac', 'checkpoint_tag']

/**
 * Makes the processes appending to one audit chain (a team vault's instances)
 * take turns, until the end of the transaction `run` sends its script in, and
 * reads what the turn continues from. On PostgreSQL in one round trip: the lock,
 * then the checkpoint and the newest entry, each a statement of its own and so
 * read after the lock is granted (a statement sees what committed before it
 * began). PostgreSQL only: a file vault has one writer, which never waits for a turn.
 */
export async function takeAuditChainTurn(run: RunScript): Promise<ChainTurn> {
  const [, checkpoint, last] = (await run(
    `SELECT pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK}); SELECT ${CHECKPOINT_COLUMNS.join(', ')} FROM log_chain LIMIT 1; SELECT seq, mac FROM logs ORDER BY seq DESC LIMIT 1`
  )) as { rows: never[] }[]
  return { checkpoint: checkpoint.rows[0], last: last.rows[0] }
}

/**
 * The audit chain's turn as the first step of a one-trip write batch
 * (postgres-batch.ts): the same lock as `takeAuditChainTurn`, then a check that
 * the newest entry is still `seq` with `mac`, the head the batch was sealed
 * from; if another process appended meanwhile (or there is no entry), the
 * script fails with STALE_STATE and the batch is sealed again from the head
 * as committed. Both in the function `tessera_audit_chain_turn` (migration
 * 20261224000000), compiled once per session.
 */
export function auditChainTurnGuard(seq: number, mac: Buffer): ScriptGuard {
  if (!Number.isSafeInteger(seq)) throw new TypeError('A chain seq is an integer')
  return { text: 'SELECT tessera_audit_chain_turn($1, $2, $3)', values: [String(AUDIT_CHAIN_LOCK), String(seq), mac] }
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
  return sql(db)('log_chain').select(CHECKPOINT_COLUMNS).first()
}

export async function saveChainCheckpoint(trx: Tx, checkpoint: ChainCheckpoint): Promise<void> {
  await sql(trx)('log_chain').del()
  await sql(trx)('log_chain').insert(checkpoint)
}
