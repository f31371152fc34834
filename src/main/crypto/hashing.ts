/**
 * Keyed BLAKE2b. Used for token fingerprints and search indexes (per-tenant
 * key) and for storing secrets such as API keys only as hashes (vault key).
 */
import { asBuffer, bytes } from './bytes'
import { sodium, sodiumWasm } from './sodium'
import { heapRegion, REGION_INPUT_LIMIT } from './sodium-heap'

const HASH_BYTES = 32

/** Where `keyedHashInHeap` works in the heap region: the hash, the key, then the input. */
const OUT = 0
const KEY = OUT + HASH_BYTES
const INPUT = KEY + 64 // crypto_generichash_KEYBYTES_MAX

/** Keyed BLAKE2b-256 of `input`, hex-encoded: alphanumeric, 64 characters. */
export function keyedHash(key: Uint8Array, input: string | Uint8Array): string {
  // A fingerprint on every create: hashed in libsodium's heap, without the wrapper's copies.
  if (input.length <= REGION_INPUT_LIMIT && key.length <= INPUT - KEY) return keyedHashInHeap(key, input)
  return asBuffer(sodium.crypto_generichash(HASH_BYTES, bytes(input), key)).toString('hex')
}

/** `keyedHash` with the input encoded straight into the heap region; the key and the input are wiped from it after. */
function keyedHashInHeap(key: Uint8Array, input: string | Uint8Array): string {
  // UTF-8 takes at most 3 bytes per UTF-16 unit.
  const heap = heapRegion(INPUT + (typeof input === 'string' ? 3 * input.length : input.length))
  let length = input.length
  if (typeof input === 'string') length = heap.write(input, INPUT, 'utf8')
  else heap.set(input, INPUT)
  heap.set(key, KEY)
  const address = heap.byteOffset
  const failed = sodiumWasm()._crypto_generichash(address + OUT, HASH_BYTES, address + INPUT, length, 0, address + KEY, key.length)
  // The input may be a secret (an API key) or a card number (a fingerprint's source).
  heap.fill(0, KEY, INPUT + length)
  if (failed) throw new Error('crypto_generichash failed')
  return heap.toString('hex', OUT, OUT + HASH_BYTES)
}
