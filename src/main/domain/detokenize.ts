/**
 * Detokenization expressions (Basis Theory's `POST /detokenize`): in every string
 * of a JSON body, `{{ ID | filters }}` stands for a token's data and
 * `{{ token: ID | filters }}` for the token object. This module finds and parses
 * them; reading the tokens and evaluating filters is the service's work.
 */
import { AppError, type FieldErrors } from './errors'
import type { ExpressionBudget } from './expressions'
import { addFieldError, formatPath } from './validation'

/** Nesting deeper than this is refused rather than walked (as in /tokenize). */
const MAX_DEPTH = 32

/**
 * Characters of values one response may carry. Expressions multiply what a body
 * asks for (10,000 references to a 5 MB token would be 50 GB), so the response is
 * bounded on its own, at four times the default body limit.
 */
export const MAX_DETOKENIZED_CHARS = 20_000_000

/** Token ids are at most this long (see ids.ts); a longer one names no token. */
const MAX_ID_LENGTH = 400

/** One `{{ … }}` and what it stands for. */
export interface TokenReference {
  /** Where it sits in the body, for error messages: `card.number`, `[0]`, `(body)`. */
  field: string
  id: string
  /** `token`: the whole token object; `data`: its data. */
  kind: 'token' | 'data'
  /** A Liquid expression applying the caller's filters to `data`, or undefined without filters. */
  filterSource?: string
}

/** A string holding expressions: literal text and references, in order. */
export class Interpolation {
  constructor(
    readonly parts: ReadonlyArray<string | TokenReference>,
    /** The string is exactly one expression (around whitespace aside): its value keeps its JSON type. */
    readonly single: boolean
  ) {}
}

export interface ParsedBody {
  /** The body with every string holding expressions replaced by an Interpolation. */
  shape: unknown
  references: TokenReference[]
  /** The malformed expressions, by field (the caller adds its own errors and throws them together). */
  errors: FieldErrors
}

const EXPRESSION = /\{\{([\s\S]*?)\}\}/g
/** `token:` (optional), an id (no whitespace, braces or pipe), then optional `| filters`. */
const REFERENCE = /^\s*(token\s*:\s*)?([^\s|{}]+)\s*(?:\|([\s\S]*))?$/

/**
 * Finds every expression of `body`, counting each against the request's expression budget
 * before parsing it, so a body of many expressions is refused early.
 * @throws ExpressionCountError past the per-request expression count
 */
export function parseDetokenizeBody(body: unknown, budget: ExpressionBudget): ParsedBody {
  const references: TokenReference[] = []
  const errors: FieldErrors = {}
  const walk = (value: unknown, path: PropertyKey[], depth: number): unknown => {
    if (depth > MAX_DEPTH) {
      addFieldError(errors, formatPath(path), `nesting deeper than ${MAX_DEPTH} levels is not supported`)
      return null
    }
    if (typeof value === 'string') return parseString(value, formatPath(path), budget, references, errors)
    if (value === null || typeof value !== 'object') return value
    if (Array.isArray(value)) return value.map((item, index) => walk(item, [...path, index], depth + 1))
    // fromEntries defines own properties, so a "__proto__" key stays a plain key.
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, [...path, key], depth + 1)]))
  }
  const shape = walk(body, [], 0)
  return { shape, references, errors }
}

function parseString(text: string, field: string, budget: ExpressionBudget, references: TokenReference[], errors: FieldErrors): unknown {
  if (!text.includes('{{')) return text
  const parts: Array<string | TokenReference> = []
  let last = 0
  for (const match of text.matchAll(EXPRESSION)) {
    budget.admit([[field, 1]])
    if (match.index > last) parts.push(text.slice(last, match.index))
    last = match.index + match[0].length
    const reference = parseReference(match[1], field)
    if (typeof reference === 'string') addFieldError(errors, field, reference)
    else {
      references.push(reference)
      parts.push(reference)
    }
  }
  if (parts.length === 0) return text
  if (last < text.length) parts.push(text.slice(last))
  const meaningful = parts.filter((part) => typeof part !== 'string' || part.trim() !== '')
  return new Interpolation(parts, meaningful.length === 1 && typeof meaningful[0] !== 'string')
}

/** The reference an expression's inside names, or the message explaining why it names none. */
function parseReference(inside: string, field: string): TokenReference | string {
  const match = REFERENCE.exec(inside)
  if (!match) return 'holds an expression that is neither {{ ID | filters }} nor {{ token: ID | filters }}'
  const [, tokenPrefix, id, filters] = match
  if (id.length > MAX_ID_LENGTH) return `names a token id longer than ${MAX_ID_LENGTH} characters`
  if (filters !== undefined && filters.trim() === '') return 'has a | without a filter after it'
  const reference: TokenReference = { field, id, kind: tokenPrefix ? 'token' : 'data' }
  if (filters !== undefined) reference.filterSource = `{{ data | ${filters.trim()} }}`
  return reference
}

/** How a value reads inside text: strings as they are, null as nothing, the rest as JSON. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return ''
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

/** The response: `shape` with each Interpolation replaced by its value (`valueOf` gives each reference's). */
export function fillDetokenized(shape: unknown, valueOf: (reference: TokenReference) => unknown): unknown {
  if (shape instanceof Interpolation) {
    const { parts, single } = shape
    if (single) return valueOf(parts.find((part): part is TokenReference => typeof part !== 'string')!) ?? null
    return parts.map((part) => (typeof part === 'string' ? part : asText(valueOf(part)))).join('')
  }
  if (Array.isArray(shape)) return shape.map((item) => fillDetokenized(item, valueOf))
  if (shape !== null && typeof shape === 'object') {
    return Object.fromEntries(Object.entries(shape).map(([key, item]) => [key, fillDetokenized(item, valueOf)]))
  }
  return shape
}

/** Adds up the size of the values a response will carry, and refuses (413) past MAX_DETOKENIZED_CHARS. */
export class DetokenizedSize {
  private total = 0
  /** Objects are shared between the references to one token: each is measured once. */
  private readonly measured = new WeakMap<object, number>()

  constructor(private readonly limit = MAX_DETOKENIZED_CHARS) {}

  /** @throws AppError `payload_too_large` naming `field` when this value passes the limit */
  add(field: string, value: unknown): void {
    this.total += this.sizeOf(value)
    if (this.total > this.limit) {
      throw new AppError('payload_too_large', `The detokenized response would be larger than ${this.limit} characters.`, {
        [field]: [`the response passes its ${this.limit} character limit here`]
      })
    }
  }

  private sizeOf(value: unknown): number {
    if (typeof value === 'string') return value.length
    if (value === null || typeof value !== 'object') return asText(value).length
    let size = this.measured.get(value)
    if (size === undefined) this.measured.set(value, (size = JSON.stringify(value).length))
    return size
  }
}
