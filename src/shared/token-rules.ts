/**
 * Token types and the rules their data must follow, without any library, so
 * the service and the desktop window judge a card or a bank account alike.
 * Messages name the rule that failed, never the value.
 */

/** Every token type, in the order pickers list them. */
export const TOKEN_TYPE_NAMES = ['token', 'card', 'bank'] as const
export type TokenTypeName = (typeof TOKEN_TYPE_NAMES)[number]

export function isTokenTypeName(value: unknown): value is TokenTypeName {
  return (TOKEN_TYPE_NAMES as readonly unknown[]).includes(value)
}

/**
 * Tokens one `POST /tokenize` may create (plain values and token requests together). The whole
 * request is one transaction of the single writer, which every other write (each read's audit
 * entry included) waits for: this bounds how long one caller can hold the others up.
 */
export const TOKENIZE_MAX_TOKENS = 1000

/** Digits a card number may have. */
export const CARD_NUMBER_DIGITS = { min: 13, max: 19 } as const
/** Digits a bank account number may have. */
export const ACCOUNT_NUMBER_DIGITS = { min: 1, max: 17 } as const

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

/** Checks one present field: the message of the first rule it breaks, or undefined when it passes. */
export type FieldRule = (value: unknown) => string | undefined

const digitsOnly = (value: unknown): value is string => typeof value === 'string' && /^\d+$/.test(value)
/** A whole number from `min` to `max`: what a number field of a form (or a token's data) may hold. */
export const integerWithin = (value: unknown, min: number, max: number): value is number => Number.isInteger(value) && (value as number) >= min && (value as number) <= max

function cardNumber(value: unknown): string | undefined {
  if (!digitsOnly(value)) return 'must be a string of digits'
  if (value.length < CARD_NUMBER_DIGITS.min || value.length > CARD_NUMBER_DIGITS.max) {
    return `must have ${CARD_NUMBER_DIGITS.min} to ${CARD_NUMBER_DIGITS.max} digits`
  }
  return luhnValid(value) ? undefined : 'fails the Luhn check'
}

function routingNumber(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^\d{9}$/.test(value)) return 'must be a string of 9 digits'
  return abaRoutingValid(value) ? undefined : 'fails the ABA routing number checksum'
}

function accountNumber(value: unknown): string | undefined {
  const { min, max } = ACCOUNT_NUMBER_DIGITS
  return digitsOnly(value) && value.length >= min && value.length <= max ? undefined : `must be a string of ${min} to ${max} digits`
}

interface DataShape {
  /** Every field the data may have, each with its rule. */
  fields: Readonly<Record<string, FieldRule>>
  required: readonly string[]
}

/**
 * Card: `number` 13–19 digits passing Luhn, `expiration_month` 1–12,
 * `expiration_year` four digits (past dates included), `cvc` 3–4 digits, as a
 * string or a number (stored as a string).
 * Bank: `routing_number` 9 digits with a valid ABA checksum, `account_number` 1–17 digits.
 * A `token` holds any value, so it has no shape here.
 */
export const DATA_SHAPES: Readonly<Partial<Record<TokenTypeName, DataShape>>> = {
  card: {
    fields: {
      number: cardNumber,
      expiration_month: (value) => (integerWithin(value, 1, 12) ? undefined : 'must be an integer from 1 to 12'),
      expiration_year: (value) => (integerWithin(value, 1000, 9999) ? undefined : 'must be a four-digit integer'),
      cvc: (value) => ((typeof value === 'string' && /^\d{3,4}$/.test(value)) || integerWithin(value, 100, 9999) ? undefined : 'must be 3 or 4 digits')
    },
    required: ['number']
  },
  bank: {
    fields: { routing_number: routingNumber, account_number: accountNumber },
    required: ['routing_number', 'account_number']
  }
}

/** `path: messages` for every field that breaks a rule; empty when the data is valid. */
export type FieldErrors = Record<string, string[]>

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The field errors of `data` as the data of a token of `type`, each under
 * `path` (`data.number`). With `partial`, `data` is a merge patch: missing
 * fields are kept as they are and `null` removes a field, which only a
 * required field may not be. Unknown types are the service's to refuse.
 */
export function tokenDataErrors(type: string, data: unknown, path = 'data', partial = false): FieldErrors {
  const errors: FieldErrors = {}
  const add = (at: string, message: string) => (errors[at] ??= []).push(message)
  if (data === undefined) {
    if (!partial) add(path, 'is required')
    return errors
  }
  // Own properties only: `constructor` or `__proto__` must not find Object's members.
  const shape = Object.hasOwn(DATA_SHAPES, type) ? DATA_SHAPES[type as TokenTypeName] : undefined
  if (!shape) return errors
  if (!isPlainObject(data)) {
    add(path, 'must be an object')
    return errors
  }
  const allowed = Object.keys(shape.fields)
  for (const [field, value] of Object.entries(data)) {
    const rule = Object.hasOwn(shape.fields, field) ? shape.fields[field] : undefined
    if (!rule) add(`${path}.${field}`, `is not an allowed field (allowed: ${allowed.join(', ')})`)
    else if (partial && value === null) {
      if (shape.required.includes(field)) add(`${path}.${field}`, 'is required')
    } else if (value !== undefined) {
      const message = rule(value)
      if (message) add(`${path}.${field}`, message)
    }
  }
  if (!partial) for (const field of shape.required) if (data[field] === undefined) add(`${path}.${field}`, 'is required')
  return errors
}

/**
 * What shows nothing on its own: white space and separators, combining marks, control
 * and format characters, and the letters and symbols drawn blank (Hangul fillers, the
 * blank Braille pattern).
 */
const BLANK_CHARACTERS = /[\s\p{Z}\p{M}\p{Cc}\p{Cf}\u115f\u1160\u3164\uffa0\u2800]/gu

/** Control characters (C0, DEL, C1), invisible formatting characters and the line and paragraph separators. */
const CONTROL_OR_INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u

/** The fewest characters people can see that a reveal reason holds. */
export const REVEAL_REASON_MIN_VISIBLE = 3

/** How many characters of `text` people can see (BLANK_CHARACTERS left out). */
export function visibleCharacterCount(text: string): number {
  return [...text.replace(BLANK_CHARACTERS, '')].length
}

/** Why `reason` would be refused as a reveal reason (the service's `revealReason`), as a sentence for the window; undefined when it would not. */
export function revealReasonProblem(reason: string): string | undefined {
  const trimmed = reason.trim()
  if (CONTROL_OR_INVISIBLE.test(trimmed)) return 'Remove the control or invisible characters (such as zero-width spaces) from the reason.'
  if (visibleCharacterCount(trimmed) < REVEAL_REASON_MIN_VISIBLE) return `Give a reason of at least ${REVEAL_REASON_MIN_VISIBLE} characters people can see.`
  return undefined
}
