/**
 * `POST /tokenize` (spec "Tokenize"): any JSON shape. Plain values become
 * generic tokens replaced by their ids; objects with `type` and `data` are token
 * requests replaced by token objects; objects and arrays nest. Atomic: every
 * element is validated and sealed first, then everything is inserted in one
 * transaction with multi-row statements — one bad element and nothing is created.
 */
import type { Tx } from '../storage/connections'
import type { Actor } from '../domain/actor'
import { ConflictError, ValidationError, type FieldErrors } from '../domain/errors'
import { ExpressionBudget, ExpressionCountError } from '../domain/expressions'
import type { ServiceContext } from './service-context'
import { tokenKeys } from './token-crypto'
import type { TokenKeys } from '../domain/token'
import { admitExpressions, parseCreateToken, prepareToken, type PrepareContext, type PreparedToken } from '../domain/token-request'
import type { CreateTokenInput } from '../../shared/contracts'
import { TOKENIZE_MAX_TOKENS } from '../../shared/token-rules'
import { toWireToken } from '../domain/token-view'
import { appendPrepared, type TokensService } from './tokens.service'
import { addFieldError, formatPath } from '../domain/validation'

/** Nesting deeper than this is refused rather than walked. */
const MAX_DEPTH = 32

/** A token request found in the body, and what replaces it in the response. */
interface Slot {
  request: unknown
  /** Where the request sits in the body: the prefix of its field paths. */
  prefix: string
  /** Plain values are answered with the id; token requests with the token object. */
  plain: boolean
  input?: CreateTokenInput
  prepared?: PreparedToken
  result?: unknown
}

/** A slot whose token is ready to insert. */
type PreparedSlot = Slot & { prepared: PreparedToken }

function isTokenRequest(value: object): value is { type: unknown; data: unknown } {
  return !Array.isArray(value) && 'type' in value && 'data' in value
}

export class TokenizeService {
  private readonly keys: TokenKeys

  constructor(
    private readonly context: ServiceContext,
    private readonly tokens: TokensService
  ) {
    this.keys = tokenKeys(context.keyring)
  }

  /** `POST /tokenize`: the body is any JSON value; each token request in it is checked with the create contract. */
  async run(actor: Actor, body: unknown): Promise<unknown> {
    const now = this.context.clock.now()
    const context: PrepareContext = { actor, keys: this.keys, now, budget: new ExpressionBudget(), cvcRetentionMs: this.context.cvcRetentionMs }
    const found: Slot[] = []
    const errors: FieldErrors = {}
    // The body is walked once to find the token requests, and the response is built with placeholders.
    const shape = this.walk(body, [], 0, found, errors)
    // Every request is parsed and its expressions counted before any is evaluated: an oversized body costs no evaluation.
    for (const slot of found) {
      // Awaited only when the budget asks to give way: an await per element costs a microtask turn each.
      if (context.budget.mustBreathe()) await context.budget.breathe()
      try {
        slot.input = this.admitted(context, slot)
      } catch (error) {
        this.collect(slot, errors, error)
      }
    }
    for (const slot of found) {
      if (!slot.input) continue
      // Sealing a thousand tokens takes tens of milliseconds: charged, so that the request gives way in slices.
      const started = performance.now()
      try {
        slot.prepared = await prepareToken(context, slot.input, slot.prefix)
      } catch (error) {
        this.collect(slot, errors, error)
      }
      context.budget.worked(performance.now() - started)
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors)
    const slots = found as PreparedSlot[]
    this.rejectDuplicateIds(slots)
    const writes = this.context.writes
    if (slots.some((slot) => slot.prepared.deduplicate)) await writes.run((trx) => this.insertDeduplicating(trx, actor, slots, now), slots.length)
    else await writes.append((rows) => appendPrepared(rows, actor, slots.map((slot) => slot.prepared), now, 'Token created by tokenize', this.context.webhookEvents), slots.length)
    return this.fill(shape, slots)
  }

  private walk(value: unknown, path: PropertyKey[], depth: number, slots: Slot[], errors: FieldErrors): unknown {
    if (depth > MAX_DEPTH) {
      addFieldError(errors, formatPath(path), `nesting deeper than ${MAX_DEPTH} levels is not supported`)
      return null
    }
    if (value === null) return null
    if (typeof value !== 'object') return this.slot({ type: 'token', data: value }, path, true, slots)
    if (isTokenRequest(value)) return this.slot(value, path, false, slots)
    if (Array.isArray(value)) return value.map((item, index) => this.walk(item, [...path, index], depth + 1, slots, errors))
    return ownEntries(Object.entries(value).map(([key, item]) => [key, this.walk(item, [...path, key], depth + 1, slots, errors)]))
  }

  /** Records one token request; returns a placeholder holding its slot index. Past the limit, the rest of the body is not walked. */
  private slot(request: unknown, path: PropertyKey[], plain: boolean, slots: Slot[]): Placeholder {
    if (slots.length === TOKENIZE_MAX_TOKENS) {
      throw ValidationError.field('(body)', `a request may create at most ${TOKENIZE_MAX_TOKENS} tokens (plain values and token requests together): send more in several requests`)
    }
    slots.push({ request, prefix: formatPath(path, '').replace(/^\(body\)$/, ''), plain })
    return new Placeholder(slots.length - 1)
  }

  private admitted(context: PrepareContext, slot: Slot): CreateTokenInput {
    const input = parseCreateToken(slot.request, slot.prefix)
    admitExpressions(context.budget, input, slot.prefix)
    return input
  }

  /** Collects the field errors of a slot's step; a plain value's errors name the value itself. */
  private collect(slot: Slot, errors: FieldErrors, error: unknown): void {
    // Passing the request's expression count ends the request: the rest of the body is not looked at.
    if (!(error instanceof ValidationError) || error instanceof ExpressionCountError) throw error
    for (const [field, messages] of Object.entries(error.errors ?? {})) {
      messages.forEach((message) => addFieldError(errors, slot.plain ? slot.prefix || '(body)' : field, message))
    }
  }

  private rejectDuplicateIds(slots: PreparedSlot[]): void {
    const seen = new Set<string>()
    for (const { prepared } of slots) {
      if (seen.has(prepared.token.id)) throw new ConflictError('The request names the same token id twice.')
      seen.add(prepared.token.id)
    }
  }

  /** The rare path: some elements ask for deduplication, which needs reads inside the transaction. */
  private async insertDeduplicating(trx: Tx, actor: Actor, slots: PreparedSlot[], now: number): Promise<void> {
    const results = await this.tokens.insertDeduplicating(trx, actor, slots.map((slot) => slot.prepared), now, 'Token created by tokenize')
    slots.forEach((slot, index) => (slot.result = results[index]))
  }

  private fill(shape: unknown, slots: PreparedSlot[]): unknown {
    if (shape instanceof Placeholder) {
      const { prepared, plain, result } = slots[shape.index]
      if (plain) return prepared.token.id
      return result ?? toWireToken(prepared.token, prepared.data, prepared.transform, { single: false })
    }
    if (Array.isArray(shape)) return shape.map((item) => this.fill(item, slots))
    if (shape !== null && typeof shape === 'object') return ownEntries(Object.entries(shape).map(([key, item]) => [key, this.fill(item, slots)]))
    return shape
  }
}

/**
 * A plain object of `entries`, each defined as an own property: a key `__proto__`
 * stays a key (an assignment would set the object's prototype, making the
 * shape a Placeholder or dropping the key from the response).
 */
function ownEntries(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, item] of entries) Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true })
  return out
}

/** Marks where a created token goes in the response. */
class Placeholder {
  constructor(readonly index: number) {}
}
