/**
 * Keyed BLAKE2b. Used for token fingerprints and search indexes (per-tenant
 * key) and for storing secrets such as API keys only as hashes (vault key).
 */
import { sodium } from './sodium'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Encodes bytes in base62: alphanumeric, as the spec's fingerprints are. */
export function base62(bytes: Uint8Array): string {
  let value = BigInt('0x' + (Buffer.from(bytes).toString('hex') || '0'))
  let out = ''
  while (value > 0n) {
    out = ALPHABET[Number(value % 62n)] + out
    value /= 62n
  }
  return out || '0'
}

/** Keyed BLAKE2b-256 of `input`, base62-encoded (≤ 43 characters). */
export function keyedHash(key: Uint8Array, input: string | Uint8Array): string {
  return base62(sodium.crypto_generichash(32, input, key))
}
