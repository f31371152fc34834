/**
 * Token types: one registry entry per type, holding its data validation
 * and defaults. The rules a card's or bank account's fields follow are shared
 * with the desktop window (src/shared/token-rules.ts); this adds what only the
 * service decides, such as an expiry in the past. Adding a type means adding
 * an entry, and its data's shape there.
 */
import { DATA_SHAPES } from '../../shared/token-rules'
import { ValidationError, type FieldErrors } from './errors'

export interface TokenTypeDefinition {
  name: string
  defaultContainers: string[]
  defaultFingerprintExpression: string
  defaultMask: unknown | undefined
  /** Spec: card's single-token responses show the evaluated mask in `mask`. */
  showsEvaluatedMask: boolean
  /**
   * Fields no mask may show more of than their first and last characters given here, whoever
   * sets the mask (PCI DSS display maximum); `{ first: 0, last: 0 }` means not at all.
   */
  maskMaximum?: Readonly<Partial<Record<string, { first: number; last: number }>>>
  /**
   * Sensitive authentication data (PCI DSS 3.3.1.2): fields kept only for the CVC
   * retention window, then removed from the stored data (cvc-retention.ts).
   */
  shortLivedFields?: readonly string[]
  /**
   * Fields holding the card or account number, which metadata may not repeat even
   * with separators (metadata-secrets.ts); absent for a type whose whole data is secret.
   */
  secretNumberFields?: readonly string[]
  /**
   * The data as stored: checked, and normalised where the type allows two
   * spellings (a card's numeric `cvc` becomes a string).
   * @throws ValidationError with paths like `${path}.number`; messages never contain the data
   */
  parseData(data: unknown, path: string): unknown
  /**
   * `defaultMask` evaluated natively, for the read path: Liquid costs several
   * microseconds per leaf. Must equal the Liquid result with null fields left
   * out — a property test holds the two together.
   */
  applyDefaultMask?(data: unknown): unknown
  /** `defaultFingerprintExpression` rendered natively for valid data (every create runs it); held equal to Liquid by a property test. */
  defaultFingerprintSource(data: unknown): string
}

/** Every character but the last `n` becomes X: the `reveal_last` filter. */
function revealLast(value: string, n: number): string {
  return value.length <= n ? value : 'X'.repeat(value.length - n) + value.slice(-n)
}

type FieldMasks = readonly (readonly [field: string, mask: (value: unknown) => unknown])[]

/** Copies the fields of `data` that are present, each through its mask (built once: this runs on every read). */
function pick(data: Record<string, unknown>, fields: FieldMasks): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [field, mask] of fields) if (data[field] !== undefined && data[field] !== null) out[field] = mask(data[field])
  return out
}

const same = (value: unknown) => value
const lastFour = (value: unknown) => revealLast(String(value), 4)
const CARD_MASK: FieldMasks = [['number', lastFour], ['expiration_month', same], ['expiration_year', same]]
const BANK_MASK: FieldMasks = [['routing_number', same], ['account_number', lastFour]]

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Collects field errors so one response names every bad field. */
class Problems {
  readonly errors: FieldErrors = {}
  add(path: string, message: string): void {
    ;(this.errors[path] ??= []).push(message)
  }
  throwIfAny(): void {
    if (Object.keys(this.errors).length > 0) throw new ValidationError(this.errors)
  }
}

/** Checks `data` is an object with only the shape's fields; returns false (after recording) when it is not an object. */
function checkShape(data: unknown, path: string, shape: DataShape, problems: Problems): data is Record<string, unknown> {
  if (data === undefined) {
    problems.add(path, 'is required')
    return false
  }
  if (!isPlainObject(data)) {
    problems.add(path, 'must be an object')
    return false
  }
  const allowed = Object.keys(shape.fields)
  for (const key of Object.keys(data)) {
    if (!allowed.includes(key)) problems.add(`${path}.${key}`, `is not an allowed field (allowed: ${allowed.join(', ')})`)
  }
  return true
}

/** Checks `fields` of `data` with the shared rules (src/shared/token-rules.ts): missing required ones, and each present one. */
function checkFields(data: Record<string, unknown>, path: string, shape: DataShape, fields: readonly string[], problems: Problems): void {
  for (const field of fields) {
    const value = data[field]
    const message = value === undefined ? (shape.required.includes(field) ? 'is required' : undefined) : shape.fields[field](value)
    if (message) problems.add(`${path}.${field}`, message)
  }
}

type DataShape = NonNullable<(typeof DATA_SHAPES)[keyof typeof DATA_SHAPES]>
const CARD = DATA_SHAPES.card!
const BANK = DATA_SHAPES.bank!

/** Past expiry dates are accepted: merchants keep expired cards (recurring billing updates them). */
function parseCard(data: unknown, path: string): unknown {
  const problems = new Problems()
  if (checkShape(data, path, CARD, problems)) checkFields(data, path, CARD, ['number', 'expiration_month', 'expiration_year', 'cvc'], problems)
  problems.throwIfAny()
  const { cvc } = data as Record<string, unknown>
  return typeof cvc === 'number' ? { ...(data as object), cvc: String(cvc) } : data
}

function parseBank(data: unknown, path: string): unknown {
  const problems = new Problems()
  if (checkShape(data, path, BANK, problems)) checkFields(data, path, BANK, Object.keys(BANK.fields), problems)
  problems.throwIfAny()
  return data
}

const INEXACT_NUMBER = `must be a finite number within ±${Number.MAX_SAFE_INTEGER}; send larger numbers as strings`

/**
 * Refuses the numbers JSON cannot carry exactly: one past ±1.8e308 parses as Infinity (stored
 * as null), an integer past 2^53 − 1 loses digits. Walked with a stack: the data may nest deeply.
 */
function checkNumbersExact(data: unknown, path: string): void {
  if (typeof data !== 'object' || data === null) {
    if (typeof data === 'number' && !isExact(data)) throw ValidationError.field(path, INEXACT_NUMBER)
    return
  }
  const problems = new Problems()
  const pending: [value: unknown, path: string][] = [[data, path]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, at] = next
    if (typeof value === 'number' && !isExact(value)) problems.add(at, INEXACT_NUMBER)
    else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) pending.push([item, Array.isArray(value) ? `${at}[${key}]` : `${at}.${key}`])
    }
  }
  problems.throwIfAny()
}

function isExact(value: number): boolean {
  return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))
}

const REGISTRY: ReadonlyMap<string, TokenTypeDefinition> = new Map(
  (
    [
      {
        name: 'token',
        defaultContainers: ['/general/high/'],
        defaultFingerprintExpression: '{{ data | stringify }}',
        defaultFingerprintSource: (data) => JSON.stringify(data),
        defaultMask: undefined,
        showsEvaluatedMask: false,
        parseData(data, path) {
          if (data === undefined) throw ValidationError.field(path, 'is required')
          checkNumbersExact(data, path)
          return data
        }
      },
      {
        name: 'card',
        defaultContainers: ['/pci/high/'],
        defaultFingerprintExpression: '{{ data.number }}',
        defaultFingerprintSource: (data) => (data as { number: string }).number,
        defaultMask: {
          number: '{{ data.number | reveal_last: 4 }}',
          expiration_month: '{{ data.expiration_month }}',
          expiration_year: '{{ data.expiration_year }}'
        },
        showsEvaluatedMask: true,
        maskMaximum: { number: { first: 6, last: 4 }, cvc: { first: 0, last: 0 } },
        shortLivedFields: ['cvc'],
        secretNumberFields: ['number'],
        parseData: parseCard,
        applyDefaultMask: (data) => pick(data as Record<string, unknown>, CARD_MASK)
      },
      {
        name: 'bank',
        defaultContainers: ['/bank/high/'],
        defaultFingerprintExpression: '{{ data.account_number }}|{{ data.routing_number }}',
        defaultFingerprintSource: (data) => {
          const bank = data as { account_number: string; routing_number: string }
          return `${bank.account_number}|${bank.routing_number}`
        },
        defaultMask: {
          routing_number: '{{ data.routing_number }}',
          account_number: '{{ data.account_number | reveal_last: 4 }}'
        },
        showsEvaluatedMask: false,
        maskMaximum: { account_number: { first: 0, last: 4 } },
        // The routing number identifies the bank, not the account: it is public.
        secretNumberFields: ['account_number'],
        parseData: parseBank,
        applyDefaultMask: (data) => pick(data as Record<string, unknown>, BANK_MASK)
      }
    ] satisfies TokenTypeDefinition[]
  ).map((def) => [def.name, deepFreeze(def)])
)

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

/** The definition of token type `name`, or undefined when there is no such type. */
export function getTokenType(name: string): TokenTypeDefinition | undefined {
  return REGISTRY.get(name)
}

/** Names of all token types, in registry order. */
export function tokenTypeNames(): string[] {
  return [...REGISTRY.keys()]
}
