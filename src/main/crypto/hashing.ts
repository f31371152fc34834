/**
 * Keyed BLAKE2b. Used for token fingerprints and search indexes (per-tenant
 * key) and for storing secrets such as API keys only as hashes (vault key).
 */
import { asBuffer, bytes } from './bytes'
import { sodium } from './sodium'

/** Keyed BLAKE2b-256 of `input`, hex-encoded: alphanumeric, 64 characters. */
export function keyedHash(key: Uint8Array, input: string | Uint8Array): string {
  return asBuffer(sodium.crypto_generichash(32, bytes(input), key)).toString('hex')
}
