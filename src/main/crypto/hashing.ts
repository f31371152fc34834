/**
 * Keyed BLAKE2b. Used for token fingerprints and search indexes (per-tenant
 * key) and for storing secrets such as API keys only as hashes (vault key).
 */
import { asBuffer, bytes } from './bytes'
import { sodium } from './sodium'
import { HASH_BYTES, HASH_INPUT, HASH_KEY_MAX, HASH_OUT, hashInRegion, heapRegion, REGION_INPUT_LIMIT } from './sodium-heap'

/** Keyed BLAKE2b-256 of `input`, hex-encoded: alphanumeric, 64 characters. */
export function keyedHash(key: Uint8Array, input: string | Uint8Array): string {
  // A fingerprint on every create: hashed in libsodium's heap, without the wrapper's copies.
  if (input.length <= REGION_INPUT_LIMIT && key.length <= HASH_KEY_MAX) return keyedHashInHeap(key, input)
  return asBuffer(sodium.crypto_generichash(HASH_BYTES, bytes(input), key)).toString('hex')
}

/** `keyedHash` with the input encoded straight into the heap region; the key and the input are wiped from it after. */
function keyedHashInHeap(key: Uint8Array, input: string | Uint8Array): string {
  // UTF-8 takes at most 3 bytes per UTF-16 unit.
  const heap = heapRegion(HASH_INPUT + (typeof input === 'string' ? 3 * input.length : input.length))
  let length = input.length
  if (typeof input === 'string') length = heap.write(input, HASH_INPUT, 'utf8')
  else heap.set(input, HASH_INPUT)
  try {
    return hashInRegion(length, key).toString('hex', HASH_OUT, HASH_OUT + HASH_BYTES)
  } finally {
    // The input may be a secret (an API key) or a card number (a fingerprint's source).
    heap.fill(0, HASH_INPUT, HASH_INPUT + length)
  }
}
