/**
 * Tokens (spec "Tokens"): create, list, get, update (merge patch), delete,
 * plus the desktop's explicit reveal and the expiry sweep. Every operation
 * writes its audit entry in the same transaction as its effect (reads too).
 */
import { setImmediate as yieldTurn } from 'node:timers/promises'
import type { Db, Tx } from '../storage/connections'
import {
  tokenMetadata,
  type CreateTokenInput,
  type ListTokensQuery,
  type ListTokensV2Query,
  type SearchTokensV2Body,
  type TokenCursorPage,
  type UpdateTokenInput,
  type WebhookEventType
} from '../../shared/contracts'
import type { Page, Permission, Token, Transform } from '../../shared/types'
import {
  deleteToken,
  findByFingerprint,
  findByFingerprints,
  fingerprintKey,
  findTokens,
  findTokenPage,
  findToken,
  findTokenForUpdate,
  lockFingerprints,
  appendTokens,
  insertTokens,
  listCvcDue,
  listExpiredTokens,
  replaceSearchIndexes,
  seekTokens,
  updateToken,
  type TokenSeek
} from '../storage/repositories/tokens.repository'
import { parseTokenSearch, type SearchTerm } from '../domain/token-search'
import { readCursor, writeCursor } from './token-cursor'
import { holdsPermission, requireTokenAccess, transformFor, visibleTokens, type AccessTarget } from '../domain/access'
import type { Actor } from '../domain/actor'
import { holdsShortLived, retainShortLived, sameShortLived, withoutShortLived } from '../domain/cvc-retention'
import { parseExpiresAt, toIsoString } from '../domain/dates'
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../domain/errors'
import { checkMaskMaximum, leavesShowingData } from '../domain/expression-rules'
import { ExpressionBudget, evaluateMask, maskExpressions, renderFingerprintSource, validateExpression, validateMask } from '../domain/expressions'
import type { ServiceContext } from './service-context'
import { audit } from './audit'
import type { RowBuffer } from '../storage/write-queue'
import { offsetOf, toPage } from '../domain/pagination'
import { asStoredJson, type StoredToken, type TokenKeys } from '../domain/token'
import { couldBeTokenId, tokenPathId } from '../domain/ids'
import { admitExpressions, prepareToken, searchIndexEntries, type PreparedToken } from '../domain/token-request'
import { assertMetadataFreeOfDigitRuns, assertMetadataFreeOfSecrets, secretsOf } from '../domain/metadata-secrets'
import { redactForDuplicate, toMinimalToken, toWireToken, usesDefaultMask, viewReadsData, type ViewOptions } from '../domain/token-view'
import { openToken, tokenKeys } from './token-crypto'
import { mergePatch } from '../domain/merge-patch'
import { getTokenType, type TokenTypeDefinition } from '../domain/token-types'
import { ReadThroughCache } from '../infra/read-through-cache'
import { notifyChange } from '../storage/change-feed'
import type { EmittedEvent, EventCause, WebhookEvents } from './webhook-events'
import { parse } from '../domain/validation'

export interface CreateResult {
  token: Token
  /** False when deduplication returned an existing token (200 instead of 201). */
  created: boolean
}

function targetOf(row: StoredToken): AccessTarget {
  return { id: row.id, containers: row.containers }
}

/** Not expired at `now`. */
function isLive(row: Pick<StoredToken, 'expires_at'>, now: number): boolean {
  return row.expires_at === null || row.expires_at > now
}

function rowCacheKey(tenantId: string, id: string): string {
  return `${tenantId}\u0000${id}`
}

/** A token id is unique per tenant. */
const duplicateId = () => new ConflictError('A token with this id already exists.')

/** A token as the audit log names it: by type (`card`, `bank`, `token`) and id. */
function tokenEntity(row: Pick<StoredToken, 'type' | 'id'>): { entityType: string; entityId: string } {
  return { entityType: row.type, entityId: row.id }
}

/**
 * Queues prepared tokens, their search indexes and their log entries for the
 * write batch's multi-row inserts. A duplicate id surfaces as a 409.
 */
export function appendPrepared(rows: RowBuffer, actor: Actor, prepared: PreparedToken[], now: number, message: string, events?: WebhookEvents): void {
  appendTokens(rows, prepared, duplicateId)
  audit(rows, now, prepared.map((p) => ({ actor, ...tokenEntity(p.token), operation: 'create', message })))
  emitTokenEvents(events, rows, now, 'token.created', actor, prepared.map((p) => p.token))
}

/**
 * A token as webhook events carry it: what describes it (type, containers,
 * metadata, fingerprint, dates), never its data nor its mask or index expressions' values.
 */
function tokenEventData(token: StoredToken): Record<string, unknown> {
  return {
    id: token.id,
    type: token.type,
    tenant_id: token.tenant_id,
    fingerprint: token.fingerprint,
    containers: token.containers,
    metadata: token.metadata,
    expires_at: token.expires_at === null ? undefined : toIsoString(token.expires_at),
    created_by: token.created_by ?? undefined,
    created_at: toIsoString(token.created_at),
    modified_by: token.modified_by ?? undefined,
    modified_at: token.modified_at === null ? undefined : toIsoString(token.modified_at)
  }
}

/** Emits one event per token; a token whose tenant subscribed to nothing of `type` costs a map lookup, its event data is not built. */
function emitTokenEvents(events: WebhookEvents | undefined, into: Tx | RowBuffer, now: number, type: WebhookEventType, cause: EventCause, tokens: readonly StoredToken[]): void {
  if (!events) return
  const emitted: EmittedEvent[] = []
  for (const token of tokens) {
    if (events.subscribed(token.tenant_id, type)) emitted.push({ tenantId: token.tenant_id, type, cause, data: tokenEventData(token) })
  }
  if (emitted.length > 0) events.emit(into, now, emitted)
}

/**
 * Holds a patched token to the per-token expression limit, counted as at creation: the
 * type's default fingerprint expression and mask are evaluated natively and do not count.
 */
function admitStoredExpressions(budget: ExpressionBudget, type: TokenTypeDefinition, row: StoredToken): void {
  budget.admit([
    ['fingerprint_expression', row.fingerprint_expression === type.defaultFingerprintExpression ? 0 : 1],
    ['search_indexes', row.search_indexes?.length ?? 0],
    ['mask', row.mask === null || usesDefaultMask(row, type) ? 0 : maskExpressions(row.mask, 'mask').length]
  ])
}

/** Tells the other instances of a team vault which token rows changed, per tenant. */
async function notifyTokenChanges(trx: Tx, rows: readonly Pick<StoredToken, 'tenant_id' | 'id'>[]): Promise<void> {
  for (const tenantId of new Set(rows.map((row) => row.tenant_id))) {
    await notifyChange(trx, { kind: 'token', tenantId, ids: rows.filter((row) => row.tenant_id === tenantId).map((row) => row.id) })
  }
}

/** Tokens a bulk read (detokenize) decrypts and shapes before it gives way to other requests. */
const VIEWS_PER_TURN = 100

/** How many token rows (ciphertext, never plaintext) are kept in memory for repeated reads. */
const ROW_CACHE_SIZE = 10_000

export class TokensService {
  /** Hot token rows by tenant and id: only what the database holds (sealed data), evicted after every change. */
  private readonly rowCache: ReadThroughCache<string, StoredToken>

  private readonly keys: TokenKeys

  constructor(private readonly context: ServiceContext) {
    this.rowCache = new ReadThroughCache({ max: ROW_CACHE_SIZE, ttlMs: context.cacheTtlMs })
    this.keys = tokenKeys(context.keyring)
  }

  /** `POST /tokens`. */
  async create(actor: Actor, input: CreateTokenInput): Promise<CreateResult> {
    const now = this.context.clock.now()
    const budget = new ExpressionBudget()
    admitExpressions(budget, input)
    const prepared = await prepareToken({ actor, keys: this.keys, now, budget, cvcRetentionMs: this.context.cvcRetentionMs }, input)
    if (prepared.deduplicate) return this.context.writes.run((trx) => this.insertPrepared(trx, actor, prepared, now))
    return this.context.writes.append((rows) => {
      appendPrepared(rows, actor, [prepared], now, 'Token created', this.context.webhookEvents)
      return { token: toWireToken(prepared.token, prepared.data, prepared.transform, { single: true }), created: true }
    })
  }

  /**
   * Inserts one prepared token inside a write transaction, or returns the
   * existing duplicate when deduplication was asked for. `view` shapes the
   * token: tokenize shows card masks as expressions, POST /tokens evaluated.
   */
  async insertPrepared(trx: Tx, actor: Actor, prepared: PreparedToken, now: number, view: ViewOptions = { single: true }): Promise<CreateResult> {
    if (prepared.deduplicate) {
      // Another instance creating the same fingerprint at this moment: one inserts, the other then finds its token.
      await lockFingerprints(trx, actor.tenantId, [prepared.token])
      const existing = await findByFingerprint(trx, actor.tenantId, prepared.token.type, prepared.token.fingerprint, now)
      if (existing) {
        audit(trx, now, [{ actor, ...tokenEntity(existing), operation: 'read', message: 'Token returned by deduplication' }])
        return { token: this.viewForReader(actor, existing, view), created: false }
      }
    }
    await this.insertMany(trx, actor, [prepared], now, 'Token created')
    return { token: toWireToken(prepared.token, prepared.data, prepared.transform, view), created: true }
  }

  /**
   * Tokenize's inserts when some tokens ask for deduplication, inside a write transaction: one
   * whose type and fingerprint a live token (or one earlier in `prepared`) already has returns
   * that token, read and audited as such; the others are inserted. The whole batch takes its
   * locks in one statement and looks its fingerprints up in one. Returns the view of each
   * existing token returned, undefined for each token inserted.
   */
  async insertDeduplicating(trx: Tx, actor: Actor, prepared: readonly PreparedToken[], now: number, message: string): Promise<(Token | undefined)[]> {
    const deduplicating = prepared.filter((p) => p.deduplicate).map((p) => p.token)
    // All at once and in order, so two such requests on two instances cannot each hold what the other waits for.
    await lockFingerprints(trx, actor.tenantId, deduplicating)
    const existing = await findByFingerprints(trx, actor.tenantId, deduplicating, now)
    const fresh: PreparedToken[] = []
    const returned: StoredToken[] = []
    const results = prepared.map((p) => {
      const duplicate = p.deduplicate ? existing.get(fingerprintKey(p.token)) : undefined
      if (duplicate) {
        returned.push(duplicate)
        return this.viewForReader(actor, duplicate, { single: false })
      }
      if (p.deduplicate) existing.set(fingerprintKey(p.token), p.token)
      fresh.push(p)
      return undefined
    })
    audit(trx, now, returned.map((row) => ({ actor, ...tokenEntity(row), operation: 'read', message: 'Token returned by deduplication' })))
    await this.insertMany(trx, actor, fresh, now, message)
    return results
  }

  /** Inserts prepared tokens, their indexes and log entries inside a transaction; a duplicate id is a 409. */
  async insertMany(trx: Tx, actor: Actor, prepared: PreparedToken[], now: number, message: string): Promise<void> {
    await insertTokens(trx, prepared, duplicateId)
    audit(trx, now, prepared.map((p) => ({ actor, ...tokenEntity(p.token), operation: 'create', message })))
    emitTokenEvents(this.context.webhookEvents, trx, now, 'token.created', actor, prepared.map((p) => p.token))
  }

  /** `GET /tokens/{id}`: 404 when absent or expired, 403 when no rule grants read. */
  async get(actor: Actor, id: string): Promise<Token> {
    const now = this.context.clock.now()
    const row = this.cachedRow(actor, id, now) ?? (await this.findCachedOr404(actor, id, now))
    const transform = requireTokenAccess(actor, 'token:read', targetOf(row))
    const token = this.view(row, transform, { single: true })
    await audit(this.context.writes, now, [{ actor, ...tokenEntity(row), operation: 'read', message: 'Token retrieved' }])
    return token
  }

  /**
   * `POST /detokenize`'s reads: each token as `get` shows it to the caller, each read audited
   * with `message`. Ids that name no token come back in `missing`, and then nothing is read;
   * a token the caller may not read is a 403 before any is decrypted.
   */
  async getMany(actor: Actor, ids: readonly string[], budget: ExpressionBudget, message: string): Promise<{ tokens: Map<string, Token>; missing: string[] }> {
    const now = this.context.clock.now()
    const rows = await this.findMany(actor, ids, now)
    const tokens = new Map<string, Token>()
    const missing = ids.filter((id) => !rows.has(id))
    if (missing.length > 0) return { tokens, missing }
    const transforms = [...rows.values()].map((row) => requireTokenAccess(actor, 'token:read', targetOf(row)))
    for (const [index, [id, row]] of [...rows.entries()].entries()) {
      // Decrypting thousands of tokens would hold the event loop: give way to other requests now and then.
      if (index % VIEWS_PER_TURN === VIEWS_PER_TURN - 1) await yieldTurn()
      await budget.breathe()
      tokens.set(id, this.view(row, transforms[index], { single: true, budget }))
    }
    await audit(this.context.writes, now, [...rows.values()].map((row) => ({ actor, ...tokenEntity(row), operation: 'read', message })))
    return { tokens, missing }
  }

  /** `GET /tokens`: filtered, paginated, newest first; tokens the caller may not read are left out and not counted. */
  async list(actor: Actor, q: ListTokensQuery): Promise<Page<Token>> {
    // Rules filter what a reader sees; a caller who may read nothing at all is refused outright.
    if (!holdsPermission(actor, 'token:read')) throw new ForbiddenError('The caller lacks the token:read permission.')
    const now = this.context.clock.now()
    const filter = { tenantId: actor.tenantId, now, ids: q.id, types: q.type, metadata: q.metadata, visibleBy: visibleTokens(actor, 'token:read') }
    const { total, rows } = await findTokenPage(this.context.reader, filter, q.size, offsetOf(q))
    return toPage(await this.listed(actor, 'token:read', rows, now, 'Token listed'), total, q)
  }

  /** `GET /v2/tokens`: as `list`, with Basis Theory's filters and cursor paging. */
  async listV2(actor: Actor, q: ListTokensV2Query): Promise<TokenCursorPage> {
    if (!holdsPermission(actor, 'token:read')) throw new ForbiddenError('The caller lacks the token:read permission.')
    const criteria = { type: q.type, fingerprint: q.fingerprint, containers: q.container === undefined ? [] : [q.container], metadata: q.metadata }
    return this.seekPage(actor, 'token:read', criteria, q, 'Token listed')
  }

  /**
   * `POST /v2/tokens/search`: the tokens a query finds, shown and hidden as the caller's `token:search`
   * grants decide (as `token:read` grants decide a list's); `data` terms match search index values.
   */
  async searchV2(actor: Actor, body: SearchTokensV2Body): Promise<TokenCursorPage> {
    if (!holdsPermission(actor, 'token:search')) throw new ForbiddenError('The caller lacks the token:search permission.')
    const criteria = this.searchCriteria(actor, parseTokenSearch(body.query))
    return this.seekPage(actor, 'token:search', criteria, body, 'Token found by search')
  }

  /**
   * `PATCH /tokens/{id}` with an RFC 7386 merge patch (data, mask, metadata) and replacements (the rest).
   * A change that makes the token show data as is (see `revealingFields`) needs the right to reveal it.
   */
  async update(actor: Actor, id: string, patch: UpdateTokenInput): Promise<Token> {
    const budget = new ExpressionBudget()
    // Expressions are checked before the write transaction, which holds up every other write.
    budget.admit([
      ['fingerprint_expression', patch.fingerprint_expression === undefined ? 0 : 1],
      ['search_indexes', patch.search_indexes?.length ?? 0],
      ['mask', patch.mask === undefined || patch.mask === null ? 0 : maskExpressions(patch.mask, 'mask').length]
    ])
    if (patch.mask !== undefined && patch.mask !== null) validateMask(patch.mask, 'mask', budget)
    if (patch.fingerprint_expression !== undefined) validateExpression(patch.fingerprint_expression, 'fingerprint_expression', budget)
    patch.search_indexes?.forEach((expression, index) => validateExpression(expression, `search_indexes[${index}]`, budget))
    const now = this.context.clock.now()
    const updating = this.context.writes.run(async (trx) => {
      // Locked: a patch of this token on another instance applies to what this one writes, not to what both read.
      const row = await findTokenForUpdate(trx, actor.tenantId, tokenPathId(id), now)
      if (!row) throw new NotFoundError('Token')
      requireTokenAccess(actor, 'token:update', targetOf(row))
      const target = { id: row.id, containers: patch.containers ?? row.containers }
      const transform = requireTokenAccess(actor, 'token:update', target)
      const revealing = this.revealingFields(row, patch)
      const mayReveal = this.mayReveal(actor, target, transform)
      if (revealing.length > 0 && !mayReveal) {
        throw new ForbiddenError(`Only a caller that may reveal this token can change what shows its data as is: ${revealing.join(', ')}.`)
      }
      const { changes, data, indexedData } = this.applyPatch(actor, row, patch, now, budget, mayReveal)
      await updateToken(trx, actor.tenantId, row.id, changes)
      // New data must not stay findable by the index values of the old data.
      if (patch.search_indexes !== undefined || patch.data !== undefined) {
        const expressions = patch.search_indexes ?? row.search_indexes ?? []
        const indexes = await searchIndexEntries(this.keys, actor.tenantId, row.id, expressions, indexedData, '', budget)
        await replaceSearchIndexes(trx, row, indexes)
      }
      audit(trx, now, [{ actor, ...tokenEntity(row), operation: 'update', message: 'Token updated' }])
      emitTokenEvents(this.context.webhookEvents, trx, now, 'token.updated', actor, [{ ...row, ...changes }])
      await notifyChange(trx, { kind: 'token', tenantId: actor.tenantId, ids: [row.id] })
      // The desktop user may reveal, but only as a logged act: such a change is logged like tokens.reveal.
      if (actor.isMember && revealing.length > 0) {
        audit(trx, now, [{ actor, ...tokenEntity(row), operation: 'reveal', message: `Token revealed: ${revealing.join(', ')} changed to show the data as is` }])
      }
      const updated = { ...row, ...changes }
      const token = toWireToken(updated, data, transform, { single: true })
      const duplicate = await findByFingerprint(trx, actor.tenantId, row.type, updated.fingerprint, now, row.id)
      return duplicate && !transformFor(actor, 'token:read', targetOf(duplicate)) ? redactForDuplicate(token) : token
    })
    return updating.finally(() => this.evict(actor.tenantId, id))
  }

  /** `DELETE /tokens/{id}`: erases the data, keeps a tombstone. */
  async delete(actor: Actor, id: string): Promise<void> {
    const now = this.context.clock.now()
    await this.context.writes
      .run(async (trx) => {
        const row = await this.findOr404(trx, actor, id, now)
        requireTokenAccess(actor, 'token:delete', targetOf(row))
        // Deleted meanwhile by another instance: that one answered 204 and logged it.
        if (!(await deleteToken(trx, row, now, actor.id, 'deleted'))) throw new NotFoundError('Token')
        audit(trx, now, [{ actor, ...tokenEntity(row), operation: 'delete', message: 'Token deleted' }])
        emitTokenEvents(this.context.webhookEvents, trx, now, 'token.deleted', actor, [row])
        await notifyChange(trx, { kind: 'token', tenantId: actor.tenantId, ids: [row.id] })
      })
      .finally(() => this.evict(actor.tenantId, id))
  }

  /** Desktop only: plaintext of one token, on an explicit action with a reason, logged. */
  async reveal(actor: Actor, id: string, why: string): Promise<Token> {
    if (!actor.isMember) throw new ForbiddenError('Only a tenant member can reveal a token.')
    const now = this.context.clock.now()
    const row = await this.findCachedOr404(actor, id, now)
    const token = this.view(row, 'reveal', { single: true })
    await audit(this.context.writes, now, [{ actor, ...tokenEntity(row), operation: 'reveal', message: `Token revealed: ${why}` }])
    return token
  }

  /** Deletes up to `limit` tokens whose `expires_at` has passed; returns how many. */
  async expireDue(now: number, limit: number): Promise<number> {
    const rows = await listExpiredTokens(this.context.reader, now, limit)
    if (rows.length === 0) return 0
    const deleting = this.context.writes.run(async (trx) => {
      const deleted: StoredToken[] = []
      for (const row of rows) {
        if (!(await deleteToken(trx, row, now, null, 'expired'))) continue
        audit(trx, now, [{ actor: null, tenantId: row.tenant_id, ...tokenEntity(row), operation: 'delete', message: 'Token expired and deleted' }])
        deleted.push(row)
      }
      emitTokenEvents(this.context.webhookEvents, trx, now, 'token.deleted', null, deleted)
      await notifyTokenChanges(trx, deleted)
      return deleted.length
    }, rows.length)
    return deleting.finally(() => rows.forEach((row) => this.evict(row.tenant_id, row.id)))
  }

  /**
   * Removes the CVC of up to `limit` cards whose retention window has passed
   * (PCI DSS 3.3.1.2), re-sealing the rest of the data; returns how many cards it handled.
   */
  async expireCvcs(now: number, limit: number): Promise<number> {
    const removing = this.context.writes.run(async (trx) => {
      const rows = await listCvcDue(trx, now, limit)
      const removed: StoredToken[] = []
      for (const row of rows) {
        const type = getTokenType(row.type)!
        const data = this.open(row)
        // Cards stored before CVC retention existed are all marked due; most hold none.
        const changes = holdsShortLived(type, data) ? this.sealed(row, withoutShortLived(type, data)) : {}
        await updateToken(trx, row.tenant_id, row.id, { ...changes, cvc_expires_at: null })
        if (holdsShortLived(type, data)) removed.push(row)
      }
      audit(trx, now, removed.map((row) => ({ actor: null, tenantId: row.tenant_id, ...tokenEntity(row), operation: 'update', message: 'CVC removed after retention window' })))
      await notifyTokenChanges(trx, removed)
      return rows
    }, limit)
    const rows = await removing
    rows.forEach((row) => this.evict(row.tenant_id, row.id))
    return rows.length
  }

  /** Forgets every cached row (after a key version is retired, cached rows may name it). */
  clearCache(): void {
    this.rowCache.clear()
  }

  /** Forgets cached rows changed by another instance of a team vault. */
  evictChanged(tenantId: string, ids: readonly string[]): void {
    for (const id of ids) this.evict(tenantId, id)
  }

  /** While changes made by other instances are not heard: cache nothing (see ReadThroughCache.bypass). */
  bypassCache(bypassed: boolean): void {
    if (bypassed) this.rowCache.bypass()
    else this.rowCache.resume()
  }

  /**
   * The tokens of a list page as the caller sees them under `permission` (tokens no rule shows are
   * redacted), their reads audited with `message`.
   */
  private async listed(actor: Actor, permission: Permission, rows: readonly StoredToken[], now: number, message: string): Promise<Token[]> {
    // One expression budget for the page: custom masks of many tokens cannot add up, nor hold the event loop.
    const budget = new ExpressionBudget()
    const tokens: Token[] = []
    for (const row of rows) {
      await budget.breathe()
      tokens.push(this.view(row, transformFor(actor, permission, targetOf(row)) ?? 'redact', { single: false, budget }))
    }
    await audit(this.context.writes, now, rows.map((row) => ({ actor, ...tokenEntity(row), operation: 'read', message })))
    return tokens
  }

  /** One page of a v2 list after the cursor `start`, of the tokens the caller's `permission` grants. */
  private async seekPage(
    actor: Actor,
    permission: Permission,
    criteria: Omit<TokenSeek, 'tenantId' | 'now' | 'visibleBy'>,
    { start, size }: { start?: string; size: number },
    message: string
  ): Promise<TokenCursorPage> {
    const now = this.context.clock.now()
    const cursorKey = this.context.keyring.fingerprintKey(actor.tenantId)
    const after = start === undefined ? undefined : readCursor(cursorKey, start)
    const seek = { ...criteria, tenantId: actor.tenantId, now, visibleBy: visibleTokens(actor, permission) }
    const { rows, next: position } = await seekTokens(this.context.reader, seek, size, after)
    const data = await this.listed(actor, permission, rows, now, message)
    const next = position === undefined ? undefined : writeCursor(cursorKey, position)
    return { pagination: { page_size: size, ...(next === undefined ? {} : { next }) }, data }
  }

  /** What a parsed v2 search keeps; a `data` value is looked up by its keyed hash, as search indexes are stored. */
  private searchCriteria(actor: Actor, terms: readonly SearchTerm[]): Omit<TokenSeek, 'tenantId' | 'now' | 'visibleBy'> {
    const criteria: Omit<TokenSeek, 'tenantId' | 'now' | 'visibleBy'> & { containers: string[] } = { containers: [], metadata: {} }
    for (const term of terms) {
      // Built with `Object.fromEntries`: a key `__proto__` is an own property, not the prototype.
      if (term.field === 'metadata') criteria.metadata = Object.fromEntries([[term.key, term.value]])
      else if (term.field === 'container') criteria.containers.push(term.value)
      else if (term.field === 'data') criteria.indexHash = this.keys.indexHash(actor.tenantId, term.value)
      else criteria[term.field] = term.value
    }
    return criteria
  }

  /**
   * `findOr404` through the row cache; an expired cached row reads as absent. A load
   * may be shared with concurrent misses that began earlier (see ReadThroughCache.load),
   * so its row's expiry is checked again against this request's `now`.
   */
  private async findCachedOr404(actor: Actor, id: string, now: number): Promise<StoredToken> {
    const cached = this.cachedRow(actor, id, now)
    if (cached) return cached
    const loaded = await this.rowCache.load(rowCacheKey(actor.tenantId, id), () => findToken(this.context.reader, actor.tenantId, tokenPathId(id), now))
    if (!loaded || !isLive(loaded, now)) throw new NotFoundError('Token')
    return loaded
  }

  /**
   * The live rows of `ids` by id: cached ones from the cache, the others in a few statements (not cached: a bulk read
   * is rarely repeated). An id no token can have is not looked up: PostgreSQL's text cannot even hold a NUL.
   */
  private async findMany(actor: Actor, ids: readonly string[], now: number): Promise<Map<string, StoredToken>> {
    const rows = new Map<string, StoredToken>()
    const uncached: string[] = []
    for (const id of ids) {
      const row = this.cachedRow(actor, id, now)
      if (row) rows.set(id, row)
      else if (couldBeTokenId(id)) uncached.push(id)
    }
    for (const row of await findTokens(this.context.reader, actor.tenantId, uncached, now)) rows.set(row.id, row)
    return rows
  }

  /** The cached row without a promise hop (GET /tokens/{id} is the hot path); undefined when not cached or expired. */
  private cachedRow(actor: Actor, id: string, now: number): StoredToken | undefined {
    const cached = this.rowCache.get(rowCacheKey(actor.tenantId, id))
    return cached && isLive(cached, now) ? cached : undefined
  }

  /** Drops a changed row from the cache, after its transaction committed. */
  private evict(tenantId: string, id: string): void {
    this.rowCache.delete(rowCacheKey(tenantId, id))
  }

  private async findOr404(db: Db, actor: Actor, id: string, now: number): Promise<StoredToken> {
    const row = await findToken(db, actor.tenantId, tokenPathId(id), now)
    if (!row) throw new NotFoundError('Token')
    return row
  }

  private open(row: StoredToken): unknown {
    return openToken(this.context.keyring, row)
  }

  /** The sealed data of `data`, under the tenant's current key. */
  private sealed(row: StoredToken, data: unknown): Pick<StoredToken, 'key_version' | 'sealed_data'> {
    return this.keys.seal(row.tenant_id, row.id, data)
  }

  /** The wire token under `transform`, decrypted only when the view shows (some of) its data. */
  private view(row: StoredToken, transform: Transform, options: ViewOptions): Token {
    return toWireToken(row, viewReadsData(row, transform, options) ? this.open(row) : undefined, transform, options)
  }

  private viewForReader(actor: Actor, row: StoredToken, options: ViewOptions): Token {
    const transform = transformFor(actor, 'token:read', targetOf(row))
    return transform ? this.view(row, transform, options) : toMinimalToken(row)
  }

  /**
   * The fields of a patch that would make the token show its data as is: new or changed
   * mask leaves showing data unmasked, and new fingerprint or search index expressions
   * (the fingerprint or index of a chosen part of the data, such as one digit, is an oracle on it).
   */
  private revealingFields(row: StoredToken, patch: UpdateTokenInput): string[] {
    const fields: string[] = []
    if (patch.mask !== undefined && patch.mask !== null) {
      const before = row.mask
      const leafKey = ({ source, path }: { source: string; path: string }) => `${path}\u0000${source}`
      const kept = new Set(before === null ? [] : maskExpressions(before, 'mask').map(leafKey))
      const changed = maskExpressions(mergePatch(before, patch.mask), 'mask').filter((leaf) => !kept.has(leafKey(leaf)))
      fields.push(...leavesShowingData(changed, getTokenType(row.type)!))
    }
    if (patch.fingerprint_expression !== undefined && patch.fingerprint_expression !== row.fingerprint_expression) fields.push('fingerprint_expression')
    if (patch.search_indexes !== undefined && JSON.stringify(patch.search_indexes) !== JSON.stringify(row.search_indexes ?? [])) fields.push('search_indexes')
    return fields
  }

  /** Whether the caller may see the token's plaintext: the desktop user (by a logged act), or a reveal grant to update or read it. */
  private mayReveal(actor: Actor, target: AccessTarget, updateTransform: Transform): boolean {
    return actor.isMember === true || updateTransform === 'reveal' || transformFor(actor, 'token:read', target) === 'reveal'
  }

  /**
   * Applies a parsed patch to a row: returns the changed columns, the new
   * plaintext as stored, and as search indexes see it (with a CVC never stored).
   */
  private applyPatch(actor: Actor, row: StoredToken, patch: UpdateTokenInput, now: number, budget: ExpressionBudget, mayReveal: boolean) {
    const type = getTokenType(row.type)!
    const before = this.open(row)
    let data = before
    if (patch.data === null) throw ValidationError.field('data', 'cannot be removed')
    if (patch.data !== undefined) {
      data = type.parseData(mergePatch(data, patch.data), 'data')
    }
    // `metadata: null` removes the member, which for a map means empty.
    const metadata = (patch.metadata === undefined ? row.metadata : (mergePatch(row.metadata, patch.metadata) ?? {})) as Record<string, string>
    parse(tokenMetadata, metadata, 'metadata')
    checkMetadata(row, metadata, data, mayReveal)
    const changes: Partial<StoredToken> = { modified_by: actor.id, modified_at: now, metadata }
    if (patch.mask !== undefined) {
      const mask = asStoredJson(mergePatch(row.mask, patch.mask))
      if (mask !== null) {
        validateMask(mask, 'mask', budget)
        checkMaskMaximum(mask, type, 'mask')
      }
      changes.mask = mask
    }
    if (patch.containers !== undefined) changes.containers = patch.containers
    if (patch.search_indexes !== undefined) changes.search_indexes = patch.search_indexes
    if (patch.fingerprint_expression !== undefined) changes.fingerprint_expression = patch.fingerprint_expression
    admitStoredExpressions(budget, type, { ...row, ...changes })
    const mask = changes.mask !== undefined ? changes.mask : row.mask
    // A mask that fails on the token's own data would fail every masked read of it: refuse it now.
    if ((patch.mask !== undefined || patch.data !== undefined) && mask !== null) evaluateMask(mask, data, 'mask', budget)
    if (patch.expires_at !== undefined) {
      changes.expires_at = patch.expires_at === null ? null : parseExpiresAt(patch.expires_at, 'expires_at', new Date(now)).getTime()
    }
    const expression = changes.fingerprint_expression ?? row.fingerprint_expression
    changes.fingerprint = this.keys.fingerprint(row.tenant_id, row.type, renderFingerprintSource(expression, data, metadata, budget))
    if (patch.data === undefined) return { changes, data, indexedData: data }
    const stored = retainShortLived(type, data, now, this.context.cvcRetentionMs)
    // A CVC that stays the same keeps its deadline; a new one starts its window now.
    const keepsDeadline = stored.expiresAt !== null && row.cvc_expires_at !== null && sameShortLived(type, before, data)
    Object.assign(changes, this.sealed(row, stored.data), { cvc_expires_at: keepsDeadline ? row.cvc_expires_at : stored.expiresAt })
    return { changes, data: stored.data, indexedData: data }
  }
}

/**
 * Metadata must not repeat the data. Only a caller who may reveal the token is told when it
 * does: for any other, the answer would be an oracle on data it cannot see, so the values it
 * writes are held to a rule that ignores the data (`assertMetadataFreeOfDigitRuns`).
 */
function checkMetadata(row: StoredToken, metadata: Record<string, string>, data: unknown, mayReveal: boolean): void {
  const entries = Object.entries(metadata)
  if (entries.length === 0) return
  const type = getTokenType(row.type)!
  if (mayReveal) {
    const secrets = secretsOf(type, data)
    for (const [key, value] of entries) assertMetadataFreeOfSecrets(value, secrets, `metadata.${key}`)
    return
  }
  // Values already stored were checked when written, by a caller who gave or could see the data.
  for (const [key, value] of entries) if (value !== row.metadata[key]) assertMetadataFreeOfDigitRuns(value, type, `metadata.${key}`)
}
