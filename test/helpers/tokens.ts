/** Test data for token tests: card numbers that pass (or fail) the Luhn check. */
import { randomInt } from 'node:crypto'
import { luhnValid } from '../../src/shared/token-rules'

/** The media type PATCH /tokens/{id} requires. */
export const MERGE_PATCH = 'application/merge-patch+json'

/** `prefix` followed by the one digit that makes it pass the Luhn check. */
export function withCheckDigit(prefix: string): string {
  for (let digit = 0; digit <= 9; digit++) if (luhnValid(prefix + digit)) return prefix + digit
  throw new Error('unreachable: some check digit always fits')
}

/** A fresh Luhn-valid card number of `length` digits starting with 4, unlikely to repeat. */
export function cardNumber(length = 16): string {
  let prefix = '4'
  while (prefix.length < length - 1) prefix += String(randomInt(10))
  return withCheckDigit(prefix)
}

/** The same number with its last digit changed, so it fails the Luhn check. */
export function breakLuhn(number: string): string {
  const last = Number(number.at(-1))
  return number.slice(0, -1) + String((last + 1) % 10)
}

/** A fresh Luhn-valid 16-digit number ending with `last4`. */
export function cardNumberEndingWith(last4: string): string {
  let prefix = '4'
  while (prefix.length < 11) prefix += String(randomInt(10))
  for (let digit = 0; digit <= 9; digit++) if (luhnValid(prefix + digit + last4)) return prefix + digit + last4
  throw new Error('unreachable: some digit always fits')
}
