/**
 * API keys, session keys, nonces and invitation link secrets: random, shown
 * once, and stored only as keyed hashes. Lookups are by hash.
 */
import { keyedHash } from './hashing'
import { randomBytes } from './random'
import type { SecretHashKey } from './types'

const SECRET_BYTES = 32

/** A new secret such as `key_private_<43 url-safe chars>`. */
export function generateSecret(prefix: string): string {
  return `${prefix}_${Buffer.from(randomBytes(SECRET_BYTES)).toString('base64url')}`
}

/** The value stored in place of a secret. */
export function hashSecret(key: SecretHashKey, secret: string): string {
  return keyedHash(key, secret)
}
