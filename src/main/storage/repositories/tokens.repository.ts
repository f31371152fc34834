/**
 * Tokens, their search indexes and tombstones. This layer sees only
 * ciphertext, keyed hashes and the non-sensitive columns; encryption lives in
 * the services.
 */
import type { Knex } from 'knex'
import type { Condition } from '../../../shared/types'
import type { SearchIndexEntry, StoredToken } from '../../domain/token'
import { sql, type Db, type Tx } from '../connections'
import { cappedCount, insertRows, notExpiredAt, type AddOnConflict } from '../sql'
import { COUNTED_ITEMS_LIMIT } from '../../../shared/pagination'
import { flushRows, rowsOf, type RowBuffer } from '../write-queue'
import { tenantKeys, type TenantKeys } from '../tenant-keys'
import { uuidBytes, uuidText } from '../uuid-bytes'
import { DEFAULT_FINGERPRINT_EXPRESSIONS, EMPTY_EXPRESSION } from '../../../../db/migrations/20261219000000_default_fingerprint_expression'
import { DEFAULT_CONTAINERS } from '../../../../db/migrations/20261228000000_token_containers'
import { deleteReturning, insertionOrder, jsonArrayElements, lockNames, lockingRows, unindexed, whereAmongKeys } from '../dialect'


/**
 * The row as the table holds it: the tenant's key (storage/tenant-keys.ts) stands for its id,
 * the fingerprint and actor ids are their bytes, four columns hold JSON text.
 */
interface TokenRow extends Omit<StoredToken, 'tenant_id' | 'fingerprint' | 'created_by' | 'modified_by' | 'mask' | 'containers' | 'metadata' | 'search_indexes'> {
  tenant_key: number
  fingerprint: Buffer
  created_by: Buffer | null
  modified_by: Buffer | null
  mask: string | null
  containers: string
  metadata: string
  search_indexes: string | null
}

const TOKEN_COLUMNS: (keyof TokenRow)[] = [
  'tenant_key',
  'id',
  'type',
  'key_version',
  'sealed_data',
  'fingerprint',
  'fingerprint_expression',
  'mask',
  'containers',
  'metadata',
  'search_indexes',
  'expires_at',
  'cvc_expires_at',
  'created_by',
  'created_at',
  'modified_by',
  'modified_at'
]

/** A keyed hash (hex above storage) as the bytes the tables hold. */
const hashBytes = (hex: string) => Buffer.from(hex, 'hex')

/**
 * A fingerprint expression as stored: '' for the default of the token's type as the migration that
 * introduced it lists them (what most tokens keep), and '{{' (which no expression that passed
 * validation can be) for an expression that is ''.
 */
function storedExpression(type: string, expression: string): string {
  if (expression === DEFAULT_FINGERPRINT_EXPRESSIONS[type]) return ''
  return expression === '' ? EMPTY_EXPRESSION : expression
}

function expressionOf(type: string, stored: string): string {
  if (stored === '') return DEFAULT_FINGERPRINT_EXPRESSIONS[type]
  return stored === EMPTY_EXPRESSION ? '' : stored
}

const nullableJson = (value: unknown) => (value === null ? null : JSON.stringify(value))

/**
 * The JSON of frozen objects whose fields hold no objects (such as the token types' default
 * masks and containers, which most tokens keep): they cannot change, so each is stringified once.
 */
const frozenJson = new WeakMap<object, string>()

function storedJson(value: unknown): string {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return JSON.stringify(value)
  let json = frozenJson.get(value)
  if (json === undefined) {
    json = JSON.stringify(value)
    if (Object.values(value).every((field) => typeof field !== 'object' || field === null)) frozenJson.set(value, json)
  }
  return json
}
const nullableNumber = (value: number | string | null) => (value === null ? null : Number(value))

/** The columns of (some of) a token's fields; `type` is the token's (given when `token` has no type but an expression). */
function toColumns(keys: TenantKeys, token: Partial<StoredToken>, type = token.type): Partial<TokenRow> {
  const { tenant_id, fingerprint, fingerprint_expression, created_by, modified_by, mask, containers, metadata, search_indexes, ...plain } = token
  const columns: Partial<TokenRow> = plain
  if (fingerprint_expression !== undefined) columns.fingerprint_expression = storedExpression(type!, fingerprint_expression)
  if (tenant_id !== undefined) columns.tenant_key = keys.keyOf(tenant_id)
  if (fingerprint !== undefined) columns.fingerprint = hashBytes(fingerprint)
  if (created_by !== undefined) columns.created_by = uuidBytes(created_by)
  if (modified_by !== undefined) columns.modified_by = uuidBytes(modified_by)
  if (mask !== undefined) columns.mask = nullableJson(mask)
  if (containers !== undefined) columns.containers = JSON.stringify(containers)
  if (metadata !== undefined) columns.metadata = JSON.stringify(metadata)
  if (search_indexes !== undefined) columns.search_indexes = nullableJson(search_indexes)
  return columns
}

/**
 * A new token's row, field by field: `toColumns`'s rest copy and added properties
 * cost V8 about twice as much, on every create.
 */
function newTokenColumns(keys: TenantKeys, token: StoredToken): TokenRow {
  return {
    tenant_key: keys.keyOf(token.tenant_id),
    id: token.id,
    type: token.type,
    key_version: token.key_version,
    sealed_data: token.sealed_data,
    fingerprint: hashBytes(token.fingerprint),
    fingerprint_expression: storedExpression(token.type, token.fingerprint_expression),
    mask: token.mask === null ? null : storedJson(token.mask),
    containers: storedJson(token.containers),
    metadata: JSON.stringify(token.metadata),
    search_indexes: nullableJson(token.search_indexes),
    expires_at: token.expires_at,
    cvc_expires_at: token.cvc_expires_at,
    created_by: uuidBytes(token.created_by),
    created_at: token.created_at,
    modified_by: uuidBytes(token.modified_by),
    modified_at: token.modified_at
  }
}

/**
 * A stored token from its row, field by field: a rest copy of the row and a spread of it,
 * overwritten field after field, cost V8 about twice as much, for each of a list's 100 rows.
 */
function fromRow(keys: TenantKeys, row: TokenRow): StoredToken {
  return {
    tenant_id: keys.idOf(row.tenant_key),
    id: row.id,
    type: row.type,
    key_version: Number(row.key_version),
    sealed_data: row.sealed_data,
    fingerprint: row.fingerprint.toString('hex'),
    fingerprint_expression: expressionOf(row.type, row.fingerprint_expression),
    mask: row.mask === null ? null : JSON.parse(row.mask),
    containers: JSON.parse(row.containers),
    metadata: JSON.parse(row.metadata),
    search_indexes: row.search_indexes === null ? null : JSON.parse(row.search_indexes),
    expires_at: nullableNumber(row.expires_at),
    cvc_expires_at: nullableNumber(row.cvc_expires_at),
    created_by: uuidText(row.created_by),
    created_at: Number(row.created_at),
    modified_by: uuidText(row.modified_by),
    modified_at: nullableNumber(row.modified_at)
  }
}

const toRows = (db: Db, rows: TokenRow[]) => rows.map((row) => fromRow(tenantKeys(db), row))
const toToken = (db: Db, row: TokenRow | undefined) => (row ? fromRow(tenantKeys(db), row) : undefined)

const SEARCH_INDEX_COLUMNS = ['tenant_key', 'token_id', 'index_hash', 'created_at'] as const

/** A token's search index rows, with its creation time: a search walks them newest first. */
const searchIndexRows = (keys: TenantKeys, entries: readonly SearchIndexEntry[], createdAt: number) =>
  entries.map(({ tenant_id, token_id, index_hash }) => ({ tenant_key: keys.keyOf(tenant_id), token_id, index_hash: hashBytes(index_hash), created_at: createdAt }))

/**
 * Metadata values as filters compare them: JavaScript's `toLowerCase` (full Unicode case
 * mapping, locale-independent), applied to stored values and to filter values alike.
 */
export const foldMetadataValue = (value: string) => value.toLowerCase()

const METADATA_COLUMNS = ['tenant_key', 'key', 'value_folded', 'created_at', 'token_id'] as const

/** The `token_metadata` rows of a token: one per key, the value folded. */
function metadataRows(keys: TenantKeys, token: Pick<StoredToken, 'tenant_id' | 'id' | 'metadata' | 'created_at'>) {
  const tenantKey = keys.keyOf(token.tenant_id)
  return Object.entries(token.metadata).map(([key, value]) => ({ tenant_key: tenantKey, token_id: token.id, key, value_folded: foldMetadataValue(value), created_at: token.created_at }))
}

const CONTAINER_COLUMNS = ['tenant_key', 'container', 'created_at', 'token_id'] as const

/** Whether a token keeps its type's default containers, as most do: those get no `token_containers` rows. */
function hasDefaultContainers(type: string, containers: readonly string[]): boolean {
  const defaults = DEFAULT_CONTAINERS[type]
  return defaults !== undefined && containers.length === defaults.length && containers.every((container, index) => container === defaults[index])
}

/** The `token_containers` rows of a token: one per container, none when it keeps its type's default containers. */
function containerRows(keys: TenantKeys, token: Pick<StoredToken, 'tenant_id' | 'id' | 'type' | 'containers' | 'created_at'>) {
  if (hasDefaultContainers(token.type, token.containers)) return []
  const tenantKey = keys.keyOf(token.tenant_id)
  return [...new Set(token.containers)].map((container) => ({ tenant_key: tenantKey, container, created_at: token.created_at, token_id: token.id }))
}

/** Deletes a token's `token_containers` rows, each by its whole primary key. */
async function deleteContainerRows(db: Db, tenantKey: number, token: Pick<StoredToken, 'id' | 'type' | 'containers' | 'created_at'>): Promise<void> {
  if (hasDefaultContainers(token.type, token.containers)) return
  for (const container of new Set(token.containers)) {
    await sql(db)('token_containers').where({ tenant_key: tenantKey, container, created_at: token.created_at, token_id: token.id }).delete()
  }
}

const TOKEN_COUNT_COLUMNS = ['tenant_key', 'type', 'count'] as const
const TOKEN_COUNTER: AddOnConflict = { key: ['tenant_key', 'type'], column: 'count' }

/** Adds `delta` to the tenant's count of tokens of `type`, with the batch's other counts (one row per key per commit). */
function countTokenChange(rows: RowBuffer, tenantId: string, type: string, delta: number): void {
  rows.insert('token_counts', TOKEN_COUNT_COLUMNS, [{ tenant_key: rows.tenantKeys.keyOf(tenantId), type, count: delta }], { addTo: TOKEN_COUNTER })
}

/** A token to insert, with the keyed hashes of its search indexes. */
export interface NewToken {
  token: StoredToken
  searchIndexes: readonly SearchIndexEntry[]
}

/**
 * Queues tokens and their search indexes for the batch's multi-row inserts.
 * A token id that is already taken fails the unit that queued it with `onDuplicate()`.
 */
export function appendTokens(rows: RowBuffer, tokens: readonly NewToken[], onDuplicate: () => Error): void {
  const keys = rows.tenantKeys
  rows.insert('tokens', TOKEN_COLUMNS, tokens.map((token) => newTokenColumns(keys, token.token)), { onConflict: onDuplicate })
  rows.insert('token_search_indexes', SEARCH_INDEX_COLUMNS, tokens.flatMap((token) => searchIndexRows(keys, token.searchIndexes, token.token.created_at)))
  rows.insert('token_metadata', METADATA_COLUMNS, tokens.flatMap((token) => metadataRows(keys, token.token)))
  rows.insert('token_containers', CONTAINER_COLUMNS, tokens.flatMap((token) => containerRows(keys, token.token)))
  for (const { token } of tokens) countTokenChange(rows, token.tenant_id, token.type, 1)
}

/** `appendTokens` inside a transaction of the write queue, written at once: its later reads see the tokens. */
export async function insertTokens(tx: Tx, tokens: readonly NewToken[], onDuplicate: () => Error): Promise<void> {
  appendTokens(rowsOf(tx), tokens, onDuplicate)
  await flushRows(tx)
}

export async function replaceSearchIndexes(tx: Tx, token: Pick<StoredToken, 'tenant_id' | 'id' | 'created_at'>, rows: readonly SearchIndexEntry[]): Promise<void> {
  await sql(tx)('token_search_indexes').where({ tenant_key: tenantKeys(tx).keyOf(token.tenant_id), token_id: token.id }).delete()
  await insertRows(sql(tx), 'token_search_indexes', SEARCH_INDEX_COLUMNS, searchIndexRows(tenantKeys(tx), rows, token.created_at))
}

/** A live (not expired) token. */
export async function findToken(db: Db, tenantId: string, id: string, now: number): Promise<StoredToken | undefined> {
  return toToken(db, await sql(db)('tokens').where({ tenant_key: tenantKeys(db).keyOf(tenantId), id }).andWhere(notExpiredAt(now)).first())
}

/** A live token, its row locked until the caller's transaction ends: a read-modify-write (merge patch) on another instance waits. */
export async function findTokenForUpdate(tx: Tx, tenantId: string, id: string, now: number): Promise<StoredToken | undefined> {
  const query = sql(tx)('tokens').where({ tenant_key: tenantKeys(tx).keyOf(tenantId), id }).andWhere(notExpiredAt(now)).first()
  return toToken(tx, await lockingRows(sql(tx), query))
}

/**
 * Holds, until the caller's transaction ends, the deduplication locks of these fingerprints
 * (taken in one order, so two transactions never wait on each other's): a lookup of a
 * fingerprint then sees a token another instance inserted under it, once that one commits.
 */
export async function lockFingerprints(tx: Tx, tenantId: string, tokens: readonly Pick<StoredToken, 'type' | 'fingerprint'>[]): Promise<void> {
  const names = [...new Set(tokens.map(fingerprintKey))].sort()
  await lockNames(sql(tx), names.map((name) => ['fingerprint', tenantId, name]))
}

/** Ids looked up per statement by `findTokens` (SQLite allows 999 bound values). */
const IDS_PER_LOOKUP = 500

/** The live tokens of `ids`, in no particular order; ids that name none are left out. */
export async function findTokens(db: Db, tenantId: string, ids: readonly string[], now: number): Promise<StoredToken[]> {
  const found: StoredToken[] = []
  const tenantKey = tenantKeys(db).keyOf(tenantId)
  for (let start = 0; start < ids.length; start += IDS_PER_LOOKUP) {
    const rows: TokenRow[] = await sql(db)('tokens')
      .where({ tenant_key: tenantKey })
      .whereIn('id', ids.slice(start, start + IDS_PER_LOOKUP))
      .andWhere(notExpiredAt(now))
    found.push(...toRows(db, rows))
  }
  return found
}

/** What deduplication matches tokens by: their type and fingerprint. */
export const fingerprintKey = (token: Pick<StoredToken, 'type' | 'fingerprint'>) => `${token.type}/${token.fingerprint}`

/** Fingerprints looked up per statement by `findByFingerprints` (three bound values each). */
const FINGERPRINTS_PER_LOOKUP = 100

/**
 * `findByFingerprint` for a batch (tokenize's deduplication), in one statement per 100
 * fingerprints: the oldest live token of each type and fingerprint, by `fingerprintKey`.
 * Each fingerprint is its own `LIMIT 1` lookup, so a fingerprint that many tokens share
 * costs one row, as it does alone.
 */
export async function findByFingerprints(db: Db, tenantId: string, tokens: readonly Pick<StoredToken, 'type' | 'fingerprint'>[], now: number): Promise<Map<string, StoredToken>> {
  const wanted = [...new Map(tokens.map((token) => [fingerprintKey(token), token])).values()]
  const found = new Map<string, StoredToken>()
  for (let start = 0; start < wanted.length; start += FINGERPRINTS_PER_LOOKUP) {
    const [first, ...rest] = wanted
      .slice(start, start + FINGERPRINTS_PER_LOOKUP)
      .map((token, index) => sql(db).select('*').from(oldestByFingerprint(db, tenantId, token, now).as(`f${index}`)))
    const rows: TokenRow[] = await (rest.length > 0 ? first.unionAll(rest) : first)
    for (const token of toRows(db, rows)) found.set(fingerprintKey(token), token)
  }
  return found
}

/** The oldest live token of the type and fingerprint (other than `exceptId`), as a query of at most one row. */
function oldestByFingerprint(db: Db, tenantId: string, token: Pick<StoredToken, 'type' | 'fingerprint'>, now: number, exceptId?: string) {
  // Fingerprints are keyed per tenant, so the fingerprint index alone finds the few candidates;
  // the unary + keeps SQLite from walking the tenant's tokens of the type by time instead.
  const query = sql(db)('tokens')
    .where({ fingerprint: hashBytes(token.fingerprint) })
    .andWhereRaw(`${unindexed(sql(db), 'tenant_key')} = ? and ${unindexed(sql(db), 'type')} = ?`, [tenantKeys(db).keyOf(tenantId), token.type])
    .andWhere(notExpiredAt(now))
  if (exceptId !== undefined) query.andWhereNot('id', exceptId)
  return query.orderBy('created_at').limit(1)
}

/** Any live token of the same type and fingerprint other than `exceptId` (deduplication). */
export async function findByFingerprint(db: Db, tenantId: string, type: string, fingerprint: string, now: number, exceptId?: string): Promise<StoredToken | undefined> {
  const [row] = (await oldestByFingerprint(db, tenantId, { type, fingerprint }, now, exceptId)) as TokenRow[]
  return toToken(db, row)
}

async function typeOf(db: Db, tenantKey: number, id: string): Promise<string | undefined> {
  return (await sql(db)('tokens').select('type').where({ tenant_key: tenantKey, id }).first())?.type
}

/** What a token's index rows (`token_metadata`, `token_containers`) are keyed by, as stored (the row locked, so that no other instance changes it meanwhile). */
type IndexedColumns = Pick<StoredToken, 'type' | 'metadata' | 'containers' | 'created_at'>

async function indexedColumnsOf(db: Db, tenantKey: number, id: string): Promise<IndexedColumns | undefined> {
  const row = await lockingRows(sql(db), sql(db)('tokens').select('type', 'metadata', 'containers', 'created_at').where({ tenant_key: tenantKey, id }).first())
  return row && indexedColumns(row)
}

const indexedColumns = (row: { type: string; metadata: string; containers: string; created_at: number | string }): IndexedColumns => ({
  type: row.type,
  metadata: JSON.parse(row.metadata),
  containers: JSON.parse(row.containers),
  created_at: Number(row.created_at)
})

/** Deletes a token's `token_metadata` rows, each by its whole primary key (the table is ordered for filters, not by token). */
async function deleteMetadataRows(db: Db, tenantKey: number, id: string, { metadata, created_at }: Pick<StoredToken, 'metadata' | 'created_at'>): Promise<void> {
  for (const [key, value] of Object.entries(metadata)) {
    await sql(db)('token_metadata').where({ tenant_key: tenantKey, key, value_folded: foldMetadataValue(value), created_at, token_id: id }).delete()
  }
}

/** Changes a token's columns; new metadata replaces its `token_metadata` rows, new containers its `token_containers` rows. */
export async function updateToken(db: Db, tenantId: string, id: string, changes: Partial<StoredToken>): Promise<number> {
  const keys = tenantKeys(db)
  const tenantKey = keys.keyOf(tenantId)
  const before = changes.metadata === undefined && changes.containers === undefined ? undefined : await indexedColumnsOf(db, tenantKey, id)
  const type = changes.type ?? (changes.fingerprint_expression === undefined ? undefined : await typeOf(db, tenantKey, id))
  if (changes.fingerprint_expression !== undefined && type === undefined) return 0
  const updated = await sql(db)('tokens').where({ tenant_key: tenantKey, id }).update(toColumns(keys, changes, type))
  if (updated && before && changes.metadata !== undefined) {
    await deleteMetadataRows(db, tenantKey, id, before)
    await insertRows(sql(db), 'token_metadata', METADATA_COLUMNS, metadataRows(keys, { tenant_id: tenantId, id, metadata: changes.metadata, created_at: before.created_at }))
  }
  if (updated && before && changes.containers !== undefined) {
    await deleteContainerRows(db, tenantKey, { id, ...before })
    await insertRows(sql(db), 'token_containers', CONTAINER_COLUMNS, containerRows(keys, { tenant_id: tenantId, id, type: before.type, containers: changes.containers, created_at: before.created_at }))
  }
  return updated
}

/**
 * Erases a token and leaves a tombstone for audit, in the caller's transaction (one of the write queue).
 * Search indexes go with the row (foreign key cascade), its metadata rows are deleted by their keys (from the
 * row as deleted); secure_delete overwrites the freed pages.
 * False when this statement deleted nothing: the token is gone already (another instance deleted it), or,
 * for `reason` 'expired', it no longer expires by `deletedAt` (its expiry was changed meanwhile).
 */
export async function deleteToken(
  db: Tx,
  row: Pick<StoredToken, 'tenant_id' | 'id' | 'type' | 'created_at'>,
  deletedAt: number,
  deletedBy: string | null,
  reason: 'deleted' | 'expired'
): Promise<boolean> {
  const tenantKey = tenantKeys(db).keyOf(row.tenant_id)
  const query = sql(db)('tokens').where({ tenant_key: tenantKey, id: row.id })
  if (reason === 'expired') query.andWhere('expires_at', '<=', deletedAt)
  const [removed] = await deleteReturning<{ type: string; metadata: string; containers: string; created_at: number | string }>(sql(db), query, ['type', 'metadata', 'containers', 'created_at'])
  if (!removed) return false
  const indexed = indexedColumns(removed)
  await deleteMetadataRows(db, tenantKey, row.id, indexed)
  await deleteContainerRows(db, tenantKey, { id: row.id, ...indexed })
  countTokenChange(rowsOf(db), row.tenant_id, row.type, -1)
  await sql(db)('token_tombstones').insert({
    tenant_id: row.tenant_id,
    token_id: row.id,
    type: row.type,
    created_at: row.created_at,
    deleted_at: deletedAt,
    deleted_by: deletedBy,
    reason
  })
  return true
}

export async function listExpiredTokens(db: Db, now: number, limit: number): Promise<StoredToken[]> {
  return toRows(db, await sql(db)('tokens').where('expires_at', '<=', now).orderBy('expires_at').limit(limit))
}

/**
 * Tokens whose CVC retention window has passed, oldest deadline first, locked for the
 * caller's transaction; rows another instance holds (its sweep, a patch) are passed over
 * and, if still due, taken next time.
 */
export async function listCvcDue(tx: Tx, now: number, limit: number): Promise<StoredToken[]> {
  const query = sql(tx)('tokens').where('cvc_expires_at', '<=', now).orderBy('cvc_expires_at').limit(limit)
  return toRows(tx, await lockingRows(sql(tx), query, { skipLocked: true }))
}

export interface TokenFilter {
  tenantId: string
  now: number
  ids: string[]
  types: string[]
  /** Exact, case-insensitive metadata matches, ANDed. */
  metadata: Record<string, string>
  /**
   * Only tokens meeting every condition of at least one clause (no clause: none);
   * undefined for no restriction. The access rules' predicate (domain/access.ts).
   */
  visibleBy?: readonly (readonly Condition[])[]
}

/** `substr` instead of LIKE: container paths may contain `_`, a LIKE wildcard. The cast tells PostgreSQL which `length`. */
function startsWithSql(column: string): string {
  return `substr(${column}, 1, length(cast(? as text))) = ?`
}

/** SQL for one condition on a token's id or (any of) its containers. */
function applyCondition(db: Knex, query: Knex.QueryBuilder, { attribute, operator, value }: Condition): void {
  if (attribute === 'id') {
    if (operator === 'equals') query.andWhere('tokens.id', value)
    else query.andWhereRaw(startsWithSql('tokens.id'), [value, value])
    return
  }
  const containers = `exists (select 1 from ${jsonArrayElements(db, 'tokens.containers', 'c')} where `
  if (operator === 'equals') query.andWhereRaw(`${containers}c.value = ?)`, [value])
  else query.andWhereRaw(`${containers}${startsWithSql('c.value')})`, [value, value])
}

/** SQL for "one of the clauses holds": each clause's conditions ANDed, the clauses ORed. */
function applyClauses(db: Knex, query: Knex.QueryBuilder, clauses: readonly (readonly Condition[])[]): void {
  if (clauses.length === 0) query.andWhereRaw('1 = 0')
  else if (!clauses.some((clause) => clause.length === 0)) {
    query.andWhere((any) => clauses.forEach((clause) => any.orWhere((all) => clause.forEach((condition) => applyCondition(db, all, condition)))))
  }
}

type MetadataEntry = [key: string, value: string]

/** How a list finds its tokens: the metadata filters, the rarest first, and the tokens access rules may allow, if they are few. */
interface ListPlan {
  metadata: readonly MetadataEntry[]
  /** The ids of every token the caller's access rules may allow (and some they do not), when there are few of them: the count reads these. */
  candidates?: Knex.QueryBuilder
  /** Whether the page reads the candidates too: when a walk of the tenant's tokens in list order would pass over more tokens to fill it. */
  pageFromCandidates?: boolean
}

/**
 * The filter as one query, newest first. With candidates, each is looked up by its key and
 * those are sorted; otherwise, with metadata filters, it walks the index of `token_metadata`
 * for the first entry of `metadata` (in `created_at` order) and checks the others in its
 * primary key; otherwise the tokens' own index by type (one type) or by time.
 */
function filtered(db: Db, filter: TokenFilter, { metadata, candidates }: Pick<ListPlan, 'metadata' | 'candidates'>): { query: Knex.QueryBuilder; order: string } {
  if (candidates) return amongCandidates(db, filter, metadata, candidates)
  const [first, ...others] = metadata
  const query = first ? withMetadata(db, filter.tenantId, first) : sql(db)('tokens').where('tokens.tenant_key', tenantKeys(db).keyOf(filter.tenantId))
  query.andWhere(notExpiredAt(filter.now))
  if (filter.ids.length) query.whereIn('tokens.id', filter.ids)
  if (filter.types.length === 1) query.andWhere('tokens.type', filter.types[0])
  // Several types: walk by time and check each row's type, rather than sort every token of those types.
  else if (filter.types.length) query.whereRaw(`${unindexed(sql(db), 'tokens.type')} in (${placeholders(filter.types)})`, filter.types)
  for (const entry of others) query.whereExists(metadataEntry(db, entry, 'm'))
  if (filter.visibleBy) applyClauses(sql(db), query, filter.visibleBy)
  // Named ids: look each up by key and sort those; the unary + keeps SQLite from walking the tenant's tokens by time instead.
  return { query, order: first ? 'm.created_at' : filter.ids.length ? unindexed(sql(db), 'tokens.created_at') : 'tokens.created_at' }
}

const placeholders = (values: readonly unknown[]) => values.map(() => '?').join(', ')

/** The tenant's tokens among `candidates` (ids), each looked up by its key. */
const tokensAmong = (db: Db, tenantId: string, candidates: Knex.QueryBuilder) =>
  whereAmongKeys(sql(db), sql(db)('tokens').where('tokens.tenant_key', tenantKeys(db).keyOf(tenantId)), 'tokens.id', candidates)

/** The filter over the candidates alone: every other condition is checked on each, none walks an index of its own (the unary +). */
function amongCandidates(db: Db, filter: TokenFilter, metadata: readonly MetadataEntry[], candidates: Knex.QueryBuilder): { query: Knex.QueryBuilder; order: string } {
  const knex = sql(db)
  const query = tokensAmong(db, filter.tenantId, candidates)
  query.andWhere(notExpiredAt(filter.now))
  if (filter.types.length) query.whereRaw(`${unindexed(knex, 'tokens.type')} in (${placeholders(filter.types)})`, filter.types)
  for (const entry of metadata) query.whereExists(metadataEntry(db, entry, 'tokens'))
  if (filter.visibleBy) applyClauses(knex, query, filter.visibleBy)
  return { query, order: unindexed(knex, 'tokens.created_at') }
}

/**
 * A list's candidates when its caller's access rules allow few tokens: for each rule (clause), the
 * tokens holding a container its first container condition matches — those with containers of
 * their own through `token_containers`, and every token of a type whose default containers it
 * matches through the tokens' type index. Undefined when a clause has no container condition
 * (it may allow any token), or when the candidates would be more than the count limit: then
 * the allowed tokens are common enough for a walk by time to find a page soon.
 */
async function containerCandidates(db: Db, filter: Pick<TokenFilter, 'tenantId' | 'ids' | 'visibleBy'>): Promise<{ ids: Knex.QueryBuilder; count: number } | undefined> {
  const clauses = filter.visibleBy
  if (!clauses?.length || filter.ids.length > 0) return undefined
  const drivers = clauses.map((clause) => clause.find((condition) => condition.attribute === 'container'))
  if (drivers.some((driver) => driver === undefined)) return undefined
  const knex = sql(db)
  const tenantKey = tenantKeys(db).keyOf(filter.tenantId)
  const ofOwn = (drivers as Condition[]).map((driver) => tokensWithOwnContainer(knex, tenantKey, driver))
  const types = Object.keys(DEFAULT_CONTAINERS).filter((type) => drivers.some((driver) => DEFAULT_CONTAINERS[type].some((container) => containerMatches(driver!, container))))
  const ofTypes = types.length > 0 ? knex('tokens').select('id').where('tenant_key', tenantKey).whereIn('type', types) : undefined
  let count = 0
  for (const query of ofOwn) count += await cappedCount(knex, query.clone())
  if (ofTypes && count <= COUNTED_ITEMS_LIMIT) count += await tokensOfTypes(knex, tenantKey, types)
  if (count > COUNTED_ITEMS_LIMIT) return undefined
  const [first, ...rest] = ofTypes ? [...ofOwn, ofTypes] : ofOwn
  // Wrapped: a query builder a promise resolves with would be run, being a thenable.
  return { ids: rest.length > 0 ? first.unionAll(rest) : first, count }
}

const containerMatches = ({ operator, value }: Condition, container: string) => (operator === 'equals' ? container === value : container.startsWith(value))

/**
 * The ids of the tokens with containers of their own of which one matches `condition`: one range
 * of `token_containers`. Containers are ASCII below DEL (`/pci/high/`), so those starting with a
 * prefix lie between it and the prefix followed by DEL.
 */
function tokensWithOwnContainer(knex: Knex, tenantKey: number, { operator, value }: Condition): Knex.QueryBuilder {
  const query = knex('token_containers').select('token_id').where('tenant_key', tenantKey)
  return operator === 'equals' ? query.andWhere('container', value) : query.andWhere('container', '>=', value).andWhere('container', '<', `${value}\x7f`)
}

/** The tenant's tokens (of these types), from its counters (tokens past their expiry included). */
async function tokensOfTypes(knex: Knex, tenantKey: number, types?: readonly string[]): Promise<number> {
  const query = knex('token_counts').sum({ count: 'count' }).where('tenant_key', tenantKey)
  const [{ count }] = await (types ? query.whereIn('type', types) : query)
  return Number(count ?? 0)
}

/**
 * How to list (or count) the filter's tokens, for a page ending `reach` tokens into the list. A walk
 * in list order passes over about `reach × tokens / candidates` tokens to fill the page when the
 * allowed ones are spread evenly; reading the candidates costs one lookup each, and counting them too.
 */
async function planList(db: Db, filter: TokenFilter, reach: number): Promise<ListPlan> {
  const [{ entries: metadata, rarest }, candidates] = await Promise.all([metadataBySelectivity(db, filter), containerCandidates(db, filter)])
  if (!candidates) return { metadata }
  // A metadata value fewer tokens hold than the candidates drives the list instead.
  if (metadata.length > 0 && (rarest ?? (await cappedCount(sql(db), metadataMatches(db, filter.tenantId, metadata[0])))) < candidates.count) return { metadata }
  return { metadata, candidates: candidates.ids, pageFromCandidates: await readsFewer(db, filter.tenantId, candidates.count, reach) }
}

/** Whether reading `candidates` tokens costs less than walking the tenant's tokens in list order to a page ending `reach` tokens in. */
async function readsFewer(db: Db, tenantId: string, candidates: number, reach: number): Promise<boolean> {
  return candidates * candidates <= reach * (await tokensOfTypes(sql(db), tenantKeys(db).keyOf(tenantId)))
}

/** The `token_metadata` rows (as `m`) of a tenant's tokens holding exactly `key` with `value`, both folded. */
function metadataMatches(db: Db, tenantId: string, [key, value]: MetadataEntry): Knex.QueryBuilder {
  return sql(db)({ m: 'token_metadata' }).where({ 'm.tenant_key': tenantKeys(db).keyOf(tenantId), 'm.key': key, 'm.value_folded': foldMetadataValue(value) })
}

function withMetadata(db: Db, tenantId: string, entry: MetadataEntry): Knex.QueryBuilder {
  return metadataMatches(db, tenantId, entry).join('tokens', { 'tokens.tenant_key': 'm.tenant_key', 'tokens.id': 'm.token_id' })
}

/** The same test for a further key, on the token of `table`: one search of the primary key, whole (the token's time and id end it). */
function metadataEntry(db: Db, [key, value]: MetadataEntry, table: 'm' | 'tokens'): Knex.QueryBuilder {
  const [tenantKey, createdAt, tokenId] = table === 'm' ? ['m.tenant_key', 'm.created_at', 'm.token_id'] : ['tokens.tenant_key', 'tokens.created_at', 'tokens.id']
  return sql(db)('token_metadata')
    .select(sql(db).raw('1'))
    .whereRaw(`token_metadata.tenant_key = ${tenantKey} and token_metadata.created_at = ${createdAt} and token_metadata.token_id = ${tokenId}`)
    .andWhere({ 'token_metadata.key': key, 'token_metadata.value_folded': foldMetadataValue(value) })
}

/**
 * The metadata filters, the one matching fewest tokens first (counted in its index, up to the
 * count limit): it drives the walk, so a rare value ANDed with a common one reads few rows.
 * With two filters or more, also that first one's count, which ordering them took.
 */
async function metadataBySelectivity(db: Db, filter: Pick<TokenFilter, 'tenantId' | 'metadata'>): Promise<{ entries: MetadataEntry[]; rarest?: number }> {
  const entries = Object.entries(filter.metadata)
  if (entries.length < 2) return { entries }
  const counts = await Promise.all(entries.map((entry) => cappedCount(sql(db), metadataMatches(db, filter.tenantId, entry))))
  const counted = entries.map((entry, index) => ({ entry, count: counts[index] })).sort((a, b) => a.count - b.count)
  return { entries: counted.map(({ entry }) => entry), rarest: counted[0].count }
}

/** Whether the count can come from the tenant's counters: no filter but type. */
const countedByCounters = (filter: TokenFilter) => filter.ids.length === 0 && Object.keys(filter.metadata).length === 0 && filter.visibleBy === undefined

/** Whether the count can come from `token_metadata` alone: metadata filters and nothing else. */
const countedByMetadata = (filter: TokenFilter) =>
  filter.ids.length === 0 && filter.types.length === 0 && Object.keys(filter.metadata).length > 0 && filter.visibleBy === undefined

export async function countTokens(db: Db, filter: TokenFilter): Promise<number> {
  return countPlanned(db, filter, await planList(db, filter, 0))
}

function countPlanned(db: Db, filter: TokenFilter, plan: ListPlan): Promise<number> {
  if (countedByCounters(filter)) return countFromCounters(db, filter)
  if (countedByMetadata(filter)) return countFromMetadata(db, filter, plan.metadata)
  return cappedCount(sql(db), filtered(db, filter, plan).query)
}

/** The tenant's tokens (of some types) less those past their expiry that the sweep has not removed yet. */
async function countFromCounters(db: Db, filter: TokenFilter): Promise<number> {
  const expired = dueTokens(db, filter)
  if (filter.types.length) expired.whereRaw(`${unindexed(sql(db), 'type')} in (${placeholders(filter.types)})`, filter.types)
  const [total, [due]] = await Promise.all([tokensOfTypes(sql(db), tenantKeys(db).keyOf(filter.tenantId), filter.types.length ? filter.types : undefined), expired])
  return total - Number(due.count)
}

/**
 * Tokens matching metadata filters, counted in `token_metadata` alone (an index range and, per
 * further key, a primary-key search) less those past their expiry that the sweep has not removed yet.
 */
async function countFromMetadata(db: Db, filter: TokenFilter, [first, ...others]: readonly MetadataEntry[]): Promise<number> {
  const expired = dueTokens(db, filter)
  for (const entry of [first, ...others]) expired.whereExists(metadataEntry(db, entry, 'tokens'))
  const due = Number((await expired)[0].count)
  const matching = metadataMatches(db, filter.tenantId, first)
  for (const entry of others) matching.whereExists(metadataEntry(db, entry, 'm'))
  return Math.min(COUNTED_ITEMS_LIMIT + 1, (await cappedCount(sql(db), matching, due)) - due)
}

/** A count of the tenant's tokens already past their expiry, through the expiry index: only those due, which the sweep keeps few. */
function dueTokens(db: Db, filter: TokenFilter): Knex.QueryBuilder {
  return sql(db)('tokens')
    .count({ count: '*' })
    .where('expires_at', '<=', filter.now)
    .andWhereRaw(`${unindexed(sql(db), 'tokens.tenant_key')} = ?`, [tenantKeys(db).keyOf(filter.tenantId)])
}

/** Newest first; insertion order breaks ties between tokens of the same millisecond. */
export async function listTokens(db: Db, filter: TokenFilter, limit: number, offset: number): Promise<StoredToken[]> {
  return listPlanned(db, filter, await planList(db, filter, offset + limit), limit, offset)
}

async function listPlanned(db: Db, filter: TokenFilter, plan: ListPlan, limit: number, offset: number, direction: 'desc' | 'asc' = 'desc'): Promise<StoredToken[]> {
  const { query, order } = filtered(db, filter, plan.pageFromCandidates ? plan : { metadata: plan.metadata })
  return toRows(
    db,
    await query
      .select('tokens.*')
      .orderByRaw(`${order} ${direction}, ${insertionOrder(sql(db), 'tokens')} ${direction}`)
      .limit(limit)
      .offset(offset)
  )
}

/**
 * A page in the second half of a list whose count is exact (no filter but type), read from the
 * oldest end and turned round: the walk skips at most half the list, and the last page none.
 */
async function listFromOldest(db: Db, filter: TokenFilter, total: number, limit: number, offset: number): Promise<StoredToken[]> {
  if (offset >= total) return []
  const rows = await listPlanned(db, filter, { metadata: [] }, Math.min(limit, total - offset), Math.max(0, total - offset - limit), 'asc')
  return rows.reverse()
}

/** One page of `listTokens` and its `countTokens`, planned once. */
export async function findTokenPage(db: Db, filter: TokenFilter, limit: number, offset: number): Promise<{ total: number; rows: StoredToken[] }> {
  if (countedByCounters(filter) && offset > 0) {
    const total = await countFromCounters(db, filter)
    const rows = offset > total / 2 ? await listFromOldest(db, filter, total, limit, offset) : await listPlanned(db, filter, { metadata: [] }, limit, offset)
    return { total, rows }
  }
  const plan = await planList(db, filter, offset + limit)
  const [total, rows] = await Promise.all([countPlanned(db, filter, plan), listPlanned(db, filter, plan, limit, offset)])
  return { total, rows }
}

/** Where a v2 list stands: its last token's creation time and id (the list's order, newest first). */
export interface TokenPosition {
  createdAt: number
  id: string
}

/** What a v2 list or search keeps: every criterion given must hold. */
export interface TokenSeek {
  tenantId: string
  now: number
  type?: string
  /** A fingerprint (hex, as tokens show it); anything else matches no token. */
  fingerprint?: string
  /** Tokens in each of these containers or below it. */
  containers: readonly string[]
  /** Exact, case-sensitive metadata matches, ANDed. */
  metadata: Record<string, string>
  /** The keyed hash of a search index value: tokens one of whose search indexes rendered it. */
  indexHash?: string
  /** As in `TokenFilter`: the access rules' predicate. */
  visibleBy?: readonly (readonly Condition[])[]
}

/** The index entries a seek walks (without the tokens, unless it walks their own index), and the columns of its order (creation time, then token id, both descending). */
interface SeekWalk {
  query: Knex.QueryBuilder
  createdAt: string
  id: string
}

/** How a seek finds its tokens: the metadata entries, the rarest first, and the few tokens its access rules allow, when it walks them. */
interface SeekPlan {
  metadata: readonly MetadataEntry[]
  /** The ids of every token the caller's access rules may allow, when there are few (`containerCandidates`) and nothing narrower drives the walk. */
  candidates?: Knex.QueryBuilder
}

async function planSeek(db: Db, seek: TokenSeek, reach: number): Promise<SeekPlan> {
  if (seek.indexHash !== undefined) return { metadata: Object.entries(seek.metadata) }
  const { entries: metadata } = await metadataBySelectivity(db, seek)
  if (metadata.length > 0 || seek.fingerprint !== undefined) return { metadata }
  const candidates = await containerCandidates(db, { tenantId: seek.tenantId, ids: [], visibleBy: seek.visibleBy })
  return candidates && (await readsFewer(db, seek.tenantId, candidates.count, reach)) ? { metadata, candidates: candidates.ids } : { metadata }
}

/**
 * The index a seek walks, newest first: a search index value's entries, the metadata entry matching
 * fewest tokens (its folded value; the exact value is checked on the token), a fingerprint's few tokens
 * (sorted: deduplication keeps them few), the few tokens the access rules allow (sorted), or the
 * tenant's tokens by type or by time.
 */
function seekWalk(db: Db, seek: TokenSeek, { metadata: [first], candidates }: SeekPlan): SeekWalk {
  const tenantKey = tenantKeys(db).keyOf(seek.tenantId)
  if (seek.indexHash !== undefined) {
    const query = sql(db)({ s: 'token_search_indexes' }).where({ 's.tenant_key': tenantKey, 's.index_hash': hashBytes(seek.indexHash) })
    return { query, createdAt: 's.created_at', id: 's.token_id' }
  }
  if (first) return { query: metadataMatches(db, seek.tenantId, first), createdAt: 'm.created_at', id: 'm.token_id' }
  if (seek.fingerprint !== undefined) {
    const query = sql(db)('tokens').where('tokens.fingerprint', fingerprintBytes(seek.fingerprint)).andWhereRaw(`${unindexed(sql(db), 'tokens.tenant_key')} = ?`, [tenantKey])
    return { query, createdAt: unindexed(sql(db), 'tokens.created_at'), id: 'tokens.id' }
  }
  if (candidates) {
    const query = tokensAmong(db, seek.tenantId, candidates)
    if (seek.type !== undefined) query.andWhereRaw(`${unindexed(sql(db), 'tokens.type')} = ?`, [seek.type])
    return { query, createdAt: unindexed(sql(db), 'tokens.created_at'), id: 'tokens.id' }
  }
  const query = sql(db)('tokens').where('tokens.tenant_key', tenantKey)
  if (seek.type !== undefined) query.andWhere('tokens.type', seek.type)
  return { query, createdAt: 'tokens.created_at', id: 'tokens.id' }
}

/** Where a stretch of a seek's walk lies: after `after` (from the newest without it), down to `until` included. */
interface WalkRange {
  after?: TokenPosition
  until?: TokenPosition
}

/** The walk's entries in `range`, newest first, at most `entries` of them, without the seek's checks. */
function walkEntries(db: Db, seek: TokenSeek, plan: SeekPlan, range: WalkRange, entries: number): Knex.QueryBuilder {
  const walk = seekWalk(db, seek, plan)
  const { after, until } = range
  if (after) walk.query.andWhereRaw(`${walk.createdAt} <= ? and (${walk.createdAt} < ? or ${walk.id} < ?)`, [after.createdAt, after.createdAt, after.id])
  if (until) walk.query.andWhereRaw(`${walk.createdAt} >= ? and (${walk.createdAt} > ? or ${walk.id} >= ?)`, [until.createdAt, until.createdAt, until.id])
  return walk.query.select(sql(db).raw(`${walk.createdAt} as created_at, ${walk.id} as token_id`)).orderByRaw(`${walk.createdAt} desc, ${walk.id} desc`).limit(entries)
}

/** A fingerprint's bytes; text that is not one (64 lowercase hex digits) gives bytes no token has. */
const fingerprintBytes = (fingerprint: string) => (/^[0-9a-f]{64}$/.test(fingerprint) ? hashBytes(fingerprint) : Buffer.alloc(0))

/**
 * The seek's criteria that its walk does not already apply, checked on each token it reaches; `metadata`
 * are the metadata entries the walk does not follow, checked folded (the exact values are compared on the rows read).
 */
function applySeekChecks(db: Db, query: Knex.QueryBuilder, seek: TokenSeek, metadata: readonly MetadataEntry[]): void {
  query.andWhere(notExpiredAt(seek.now))
  const walksType = seek.indexHash === undefined && Object.keys(seek.metadata).length === 0 && seek.fingerprint === undefined
  if (seek.type !== undefined && !walksType) query.andWhereRaw(`${unindexed(sql(db), 'tokens.type')} = ?`, [seek.type])
  if (seek.fingerprint !== undefined && (seek.indexHash !== undefined || Object.keys(seek.metadata).length > 0)) {
    query.andWhereRaw(`${unindexed(sql(db), 'tokens.fingerprint')} = ?`, [fingerprintBytes(seek.fingerprint)])
  }
  for (const entry of metadata) query.whereExists(metadataEntry(db, entry, 'tokens'))
  for (const container of seek.containers) applyCondition(sql(db), query, { attribute: 'container', operator: 'starts_with', value: container })
  if (seek.visibleBy) applyClauses(sql(db), query, seek.visibleBy)
}

/** Whether a token holds exactly these metadata values, case included (the index holds them folded). */
const holdsExactly = (row: StoredToken, metadata: Record<string, string>) => Object.entries(metadata).every(([key, value]) => Object.hasOwn(row.metadata, key) && row.metadata[key] === value)

/**
 * One batch of a seek: of the first `SEEK_ROWS_PER_REQUEST` walk entries in `range` (its window), the tokens
 * that pass the seek's checks, at most `limit`, in the walk's order. The checks run on the window's entries
 * alone: a check few tokens pass (a caller allowed only a rare container) cannot make the engine walk the
 * tenant's whole index in one query. The window is read lazily: a batch that fills up early stops there.
 */
async function seekBatch(db: Db, seek: TokenSeek, plan: SeekPlan, range: WalkRange, limit: number): Promise<StoredToken[]> {
  const { metadata } = plan
  const window = walkEntries(db, seek, plan, range, SEEK_ROWS_PER_REQUEST).as('w')
  const query = sql(db)
    .select('tokens.*')
    .from(window)
    .join('tokens', (on) => on.on('tokens.tenant_key', '=', sql(db).raw('?', [tenantKeys(db).keyOf(seek.tenantId)])).andOn('tokens.id', '=', 'w.token_id'))
  // The walk follows the first metadata entry unless it walks a search index value.
  applySeekChecks(db, query, seek, seek.indexHash === undefined ? metadata.slice(1) : metadata)
  return toRows(db, await query.orderByRaw('w.created_at desc, w.token_id desc').limit(limit))
}

/** The last of the `SEEK_ROWS_PER_REQUEST` walk entries after `after`, if the walk holds that many: where a request's window ends. */
async function windowEnd(db: Db, seek: TokenSeek, plan: SeekPlan, after?: TokenPosition): Promise<TokenPosition | undefined> {
  const [entry] = await walkEntries(db, seek, plan, { after }, 1).offset(SEEK_ROWS_PER_REQUEST - 1)
  return entry && { createdAt: Number(entry.created_at), id: String(entry.token_id) }
}

/**
 * Index entries of its walk a seek may pass over in one request, whether the engine checks them (an access
 * rule or container few tokens match) or the service does (a metadata value in another case): either could
 * otherwise make one request walk the tenant's whole index.
 */
export const SEEK_ROWS_PER_REQUEST = 1000

/** Rows read per batch once the first batch (the page and one more) did not fill the page: fewer queries for long runs passed over. */
const SEEK_BATCH_ROWS = 100

/** A v2 page: its tokens, and where the next page starts (absent when the walk reached the end). */
export interface SeekPage {
  rows: StoredToken[]
  next?: TokenPosition
}

const positionOf = (row: StoredToken): TokenPosition => ({ createdAt: row.created_at, id: row.id })

/**
 * Up to `limit` tokens of a seek after `after` (from the newest without it), newest first, tokens of one
 * millisecond by id, and the position the next page starts from when any row follows. Keyset paging: the
 * walk resumes in its index at the position, so a page costs the same however deep it is, and nothing is
 * counted. A request passes over at most `SEEK_ROWS_PER_REQUEST` entries of its walk (its window): the
 * first batch checks the window's entries in order and stops once the page is full, as a plain page does;
 * if it is not, the window's last entry is looked up (the walk alone, without the checks), and later
 * batches read on from the last row read to that entry. Rows the page does not keep are passed over (a
 * metadata value in another case; a token's second search index entry of the same value). When the
 * window ends before the page is full, the page is returned short (or empty), its `next` the window's
 * last entry, and the caller's next request reads on from there.
 */
export async function seekTokens(db: Db, seek: TokenSeek, limit: number, after?: TokenPosition): Promise<SeekPage> {
  const plan = await planSeek(db, seek, limit + 1)
  const kept: StoredToken[] = []
  let until: TokenPosition | undefined
  for (let position = after, first = true; ; first = false) {
    const wanted = first ? limit + 1 : Math.max(limit + 1, SEEK_BATCH_ROWS)
    const batch = await seekBatch(db, seek, plan, { after: position, until }, wanted)
    for (const row of batch) {
      // Two search indexes of one token may render the same value: its entries come out side by side.
      if (kept.at(-1)?.id !== row.id && holdsExactly(row, seek.metadata)) kept.push(row)
    }
    if (kept.length > limit) return { rows: kept.slice(0, limit), next: positionOf(kept[limit - 1]) }
    if (first) until = await windowEnd(db, seek, plan, after)
    const last = batch.at(-1)
    if (batch.length < wanted || !last) return { rows: kept, next: until }
    position = positionOf(last)
  }
}
