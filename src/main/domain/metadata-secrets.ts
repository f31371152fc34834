/**
 * What a token's metadata may not hold: its secrets, not its words. Metadata is
 * stored and shown in plaintext, so copying a card or account number, a CVC or
 * a generic token's value into it would defeat the encryption; sharing a word
 * with the data ("Non-Sensitive Value" beside "Sensitive Value") is ordinary
 * description and is allowed.
 */
import { ValidationError } from './errors'
import type { TokenTypeDefinition } from './token-types'

/** The secrets of one token's data, in the forms metadata is checked against. */
export interface DataSecrets {
  /** Card and account numbers, as digits: refused inside a metadata digit run. */
  numbers: string[]
  /** Whole values (a generic token's data or its strings, a CVC): refused as a metadata value. */
  values: Set<string>
}

/** A number this long is specific enough to refuse wherever it appears in a run; a shorter one only as the whole run. */
const NUMBER_FOUND_INSIDE_RUNS = 8
/** A generic token's strings shorter than this ("yes", "EUR") are too common to be its secret. */
const GENERIC_LEAF_MIN_LENGTH = 4
/** Digits, possibly grouped by spaces, dashes, dots or slashes ("4242 4242 4242 4242"). */
const DIGIT_RUN = /\d(?:[\s./-]*\d)*/g

export function secretsOf(type: TokenTypeDefinition, data: unknown): DataSecrets {
  const secrets: DataSecrets = { numbers: [], values: new Set() }
  if (type.secretNumberFields === undefined) {
    secrets.values.add(wholeValue(data))
    collectLeaves(data, secrets.values, 0)
    return secrets
  }
  const fields = data as Record<string, unknown>
  secrets.numbers.push(...secretNumbers(type, fields))
  for (const field of type.shortLivedFields ?? []) if (fields[field] !== undefined && fields[field] !== null) secrets.values.add(String(fields[field]))
  return secrets
}

/** @throws ValidationError naming `field` when `value` holds one of the secrets */
export function assertMetadataFreeOfSecrets(value: string, secrets: DataSecrets, field: string): void {
  if (secrets.values.has(value.trim()) || holdsNumber(value, secrets.numbers)) throw ValidationError.field(field, 'must not contain the token data')
}

/** Digits in a run (separators aside) that a caller who cannot see the data may not write: a CVC has 3. */
const BLIND_DIGIT_RUN = 3

/**
 * The metadata rule for a caller who may not reveal the token. It must not depend on the
 * data: refusing exactly the values that match it would answer guesses (a CVC in 20 requests).
 * Types with secret numbers refuse any digit run of 3 or more; a generic token's data has no
 * shape to refuse by, so nothing is refused and the caller learns nothing either way.
 * @throws ValidationError naming `field`
 */
export function assertMetadataFreeOfDigitRuns(value: string, type: TokenTypeDefinition, field: string): void {
  if (type.secretNumberFields === undefined && type.shortLivedFields === undefined) return
  if (digitRuns(value).some((digits) => digits.length >= BLIND_DIGIT_RUN)) {
    throw ValidationError.field(field, `must not contain ${BLIND_DIGIT_RUN} or more digits in a row: a caller who cannot reveal this token may not write digit runs into its metadata`)
  }
}

/** The digits of each digit run of `text`, separators dropped ("4242 4242" gives "42424242"). */
function digitRuns(text: string): string[] {
  return Array.from(text.matchAll(DIGIT_RUN), ([run]) => run.replace(/\D/g, ''))
}

/**
 * Whether `value` holds one of the numbers of `data`, even grouped ("4242-4242-4242-4242"): the type's
 * card or account numbers, or for a generic token every number of 8 digits or more in its data
 * ("123-45-6789" in "ssn 123 45 6789").
 */
export function holdsSecretNumber(value: string, type: TokenTypeDefinition, data: unknown): boolean {
  return holdsNumber(value, type.secretNumberFields === undefined ? longNumbersIn(data) : secretNumbers(type, data))
}

function secretNumbers(type: TokenTypeDefinition, data: unknown): string[] {
  const fields = (data ?? {}) as Record<string, unknown>
  return (type.secretNumberFields ?? []).map((field) => fields[field]).filter((number): number is string => typeof number === 'string')
}

/** The digits of each digit run of at least `NUMBER_FOUND_INSIDE_RUNS` digits in a generic token's strings and numbers. */
function longNumbersIn(data: unknown): string[] {
  const leaves = new Set<string>()
  collectLeaves(data, leaves, 0)
  return [...leaves].flatMap(digitRuns).filter((digits) => digits.length >= NUMBER_FOUND_INSIDE_RUNS)
}

function holdsNumber(value: string, numbers: readonly string[]): boolean {
  if (numbers.length === 0) return false
  return digitRuns(value).some((digits) => numbers.some((number) => (number.length >= NUMBER_FOUND_INSIDE_RUNS ? digits.includes(number) : digits === number)))
}

function wholeValue(data: unknown): string {
  return typeof data === 'string' ? data.trim() : JSON.stringify(data)
}

function collectLeaves(data: unknown, out: Set<string>, depth: number): void {
  if (typeof data === 'string' && data.trim().length >= GENERIC_LEAF_MIN_LENGTH) out.add(data.trim())
  else if (typeof data === 'number' && String(data).length >= GENERIC_LEAF_MIN_LENGTH) out.add(String(data))
  else if (data !== null && typeof data === 'object' && depth < 64) for (const item of Object.values(data)) collectLeaves(item, out, depth + 1)
}
