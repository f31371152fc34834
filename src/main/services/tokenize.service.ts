/**
 * `POST /tokenize` (spec "Tokenize"): any JSON shape. Plain values become
 * generic tokens replaced by their ids; objects with `type` and `data` are token
 * requests replaced by token objects; objects and arrays nest. Atomic: every
 * element is validated and sealed first, then everything is inserted in one
 * transaction with multi-row statements — one bad element and nothing is created.
 */
import type { Knex } from 'knex'
import type { Actor } from './context'
import { ConflictError, ValidationError, type FieldErrors } from './errors'
import type { ServiceContext } from './index'
import { parseCreateToken, prepareToken, type PrepareContext, type PreparedToken } from './token-request'
import { toWireToken } from './token-view'
import { appendPrepared, type TokensService } from './tokens.service'
import { addFieldError, formatPath } from './validation'

/** Nesting deeper than this is refused rather than walked. */
const MAX_DEPTH = 32

/** A token request found in the body, and what replaces it in the response. */
interface Slot {
  prepared: PreparedToken
  /** Plain values are answered with the id; token requests with the token object. */
  plain: boolean
  result?: unknown
}

function isTokenRequest(value: object): value is { type: unknown; data: unknown } {
  return !Array.isArray(value) && 'type' in value && 'data' in value
}

export class TokenizeService {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly tokens: TokensService
  ) {}

  async tokenize(actor: Actor, body: unknown): Promise<unknown> {
    const now = this.ctx.clock.now()
    const context: PrepareContext = { actor, keyring: this.ctx.keyring, now, cvcRetentionMs: this.ctx.cvcRetentionMs }
    const slots: Slot[] = []
    const errors: FieldErrors = {}
    // The body is walked once to validate and seal, and the response is built with placeholders.
    const shape = this.walk(body, [], 0, context, slots, errors)
    if (Object.keys(errors).length > 0) throw new ValidationError(errors)
    this.rejectDuplicateIds(slots)
    if (slots.some((slot) => slot.prepared.deduplicate)) await this.ctx.writes.run((trx) => this.insertDeduplicating(trx, actor, slots, now))
    else await this.ctx.writes.append((rows) => appendPrepared(rows, actor, slots.map((slot) => slot.prepared), now, 'Token created by tokenize'))
    return this.fill(shape, slots)
  }

  private walk(value: unknown, path: PropertyKey[], depth: number, context: PrepareContext, slots: Slot[], errors: FieldErrors): unknown {
    if (depth > MAX_DEPTH) {
      addFieldError(errors, formatPath(path), `nesting deeper than ${MAX_DEPTH} levels is not supported`)
      return null
    }
    if (value === null) return null
    if (typeof value !== 'object') return this.slot({ type: 'token', data: value }, path, true, context, slots, errors)
    if (isTokenRequest(value)) return this.slot(value, path, false, context, slots, errors)
    if (Array.isArray(value)) return value.map((item, index) => this.walk(item, [...path, index], depth + 1, context, slots, errors))
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = this.walk(item, [...path, key], depth + 1, context, slots, errors)
    return out
  }

  /** Prepares one token; returns a placeholder holding its slot index. */
  private slot(request: unknown, path: PropertyKey[], plain: boolean, context: PrepareContext, slots: Slot[], errors: FieldErrors): Placeholder | null {
    const prefix = formatPath(path, '').replace(/^\(body\)$/, '')
    try {
      const prepared = prepareToken(context, parseCreateToken(request, prefix), prefix)
      slots.push({ prepared, plain })
      return new Placeholder(slots.length - 1)
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      for (const [field, messages] of Object.entries(error.errors ?? {})) {
        messages.forEach((message) => addFieldError(errors, plain ? prefix || '(body)' : field, message))
      }
      return null
    }
  }

  private rejectDuplicateIds(slots: Slot[]): void {
    const seen = new Set<string>()
    for (const { prepared } of slots) {
      if (seen.has(prepared.row.id)) throw new ConflictError('The request names the same token id twice.')
      seen.add(prepared.row.id)
    }
  }

  /** The rare path: some elements ask for deduplication, which needs reads inside the transaction. */
  private async insertDeduplicating(trx: Knex.Transaction, actor: Actor, slots: Slot[], now: number): Promise<void> {
    for (const slot of slots) {
      const { prepared } = slot
      slot.result = prepared.deduplicate ? (await this.tokens.insertPrepared(trx, actor, prepared, now, { single: false })).token : undefined
    }
    const fresh = slots.filter((slot) => !slot.prepared.deduplicate)
    await this.tokens.insertMany(trx, actor, fresh.map((slot) => slot.prepared), now, 'Token created by tokenize')
  }

  private fill(shape: unknown, slots: Slot[]): unknown {
    if (shape instanceof Placeholder) {
      const { prepared, plain, result } = slots[shape.index]
      if (plain) return prepared.row.id
      return result ?? toWireToken(prepared.row, prepared.data, prepared.transform, { single: false })
    }
    if (Array.isArray(shape)) return shape.map((item) => this.fill(item, slots))
    if (shape !== null && typeof shape === 'object') {
      return Object.fromEntries(Object.entries(shape).map(([key, item]) => [key, this.fill(item, slots)]))
    }
    return shape
  }
}

/** Marks where a created token goes in the response. */
class Placeholder {
  constructor(readonly index: number) {}
}
