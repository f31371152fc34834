/**
 * Token types: one registry entry per type, holding its data validation
 * and defaults. Adding a type means adding an entry, nothing else.
 */
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
  /** Throws a ValidationError with paths like `${path}.number`; messages never contain the data. */
  validateData(data: unknown, path: string, now: Date): void
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

/** True when `digits` (a string of digits) passes the Luhn (mod 10) check. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false
  let sum = 0
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48
    if (double && (d *= 2) > 9) d -= 9
    sum += d
  }
  return sum % 10 === 0
}

/** True when `digits` is nine digits with a valid ABA routing checksum (weights 3, 7, 1). */
export function abaRoutingValid(digits: string): boolean {
  if (!/^\d{9}$/.test(digits)) return false
  const d = [...digits].map(Number)
  return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])) % 10 === 0
}

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

/** Checks `data` is an object with only `allowed` keys; returns false (after recording) when it is not an object. */
function checkShape(data: unknown, path: string, allowed: readonly string[], problems: Problems): data is Record<string, unknown> {
  if (data === undefined) {
    problems.add(path, 'is required')
    return false
  }
  if (!isPlainObject(data)) {
    problems.add(path, 'must be an object')
    return false
  }
  for (const key of Object.keys(data)) {
    if (!allowed.includes(key)) problems.add(`${path}.${key}`, `is not an allowed field (allowed: ${allowed.join(', ')})`)
  }
  return true
}

const CARD_FIELDS = ['number', 'expiration_month', 'expiration_year', 'cvc'] as const
const BANK_FIELDS = ['routing_number', 'account_number'] as const

function validateCard(data: unknown, path: string, now: Date): void {
  const problems = new Problems()
  if (checkShape(data, path, CARD_FIELDS, problems)) {
    const { number, expiration_month: month, expiration_year: year, cvc } = data
    if (number === undefined) problems.add(`${path}.number`, 'is required')
    else if (typeof number !== 'string' || !/^\d+$/.test(number)) problems.add(`${path}.number`, 'must be a string of digits')
    else if (number.length < 13 || number.length > 19) problems.add(`${path}.number`, 'must have 13 to 19 digits')
    else if (!luhnValid(number)) problems.add(`${path}.number`, 'fails the Luhn check')

    const monthOk = month === undefined || (Number.isInteger(month) && (month as number) >= 1 && (month as number) <= 12)
    if (!monthOk) problems.add(`${path}.expiration_month`, 'must be an integer from 1 to 12')
    const yearOk = year === undefined || (Number.isInteger(year) && (year as number) >= 1000 && (year as number) <= 9999)
    if (!yearOk) problems.add(`${path}.expiration_year`, 'must be a four-digit integer')

    // A card is valid through the end of its expiration month.
    if (monthOk && yearOk && year !== undefined) {
      const nowYear = now.getUTCFullYear()
      if ((year as number) < nowYear) problems.add(`${path}.expiration_year`, 'is in the past')
      else if (year === nowYear && month !== undefined && (month as number) < now.getUTCMonth() + 1) {
        problems.add(`${path}.expiration_month`, 'is in the past')
      }
    }

    if (cvc !== undefined && (typeof cvc !== 'string' || !/^\d{3,4}$/.test(cvc))) {
      problems.add(`${path}.cvc`, 'must be a string of 3 or 4 digits')
    }
  }
  problems.throwIfAny()
}

function validateBank(data: unknown, path: string): void {
  const problems = new Problems()
  if (checkShape(data, path, BANK_FIELDS, problems)) {
    const { routing_number: routing, account_number: account } = data
    if (routing === undefined) problems.add(`${path}.routing_number`, 'is required')
    else if (typeof routing !== 'string' || !/^\d{9}$/.test(routing)) problems.add(`${path}.routing_number`, 'must be a string of 9 digits')
    else if (!abaRoutingValid(routing)) problems.add(`${path}.routing_number`, 'fails the ABA routing number checksum')

    if (account === undefined) problems.add(`${path}.account_number`, 'is required')
    else if (typeof account !== 'string' || !/^\d{1,17}$/.test(account)) {
      problems.add(`${path}.account_number`, 'must be a string of 1 to 17 digits')
    }
  }
  problems.throwIfAny()
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
        validateData(data, path) {
          if (data === undefined) throw ValidationError.field(path, 'is required')
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
        validateData: validateCard,
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
        validateData: validateBank,
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
