/**
 * One region of libsodium's heap, kept between calls, for the primitives that
 * run on every request: the audit chain's MAC (audit.ts), fingerprints and
 * search index hashes (hashing.ts), and sealing token data (aead.ts). Through
 * the wrapper, each call allocates, copies in and frees every argument and
 * copies its result out into a view of its own; here the input is encoded
 * straight into the heap and the result copied out once.
 *
 * Every use is synchronous (nothing else runs between writing the region and
 * reading the result), so one region serves them all; each lays it out as it
 * needs. Callers wipe the keys and plaintext they write here before they return.
 */
import { sodiumWasm, type SodiumWasm } from './sodium'

/** Inputs up to this size go through the region; larger ones through the wrapper, so the region stays small. */
export const REGION_INPUT_LIMIT = 64 * 1024

let wasm: SodiumWasm | undefined
let address = 0
let capacity = 0
let region: Buffer | undefined

/**
 * The region, with room for `length` bytes, as a Buffer over the current heap:
 * its `byteOffset` is its address in the heap.
 */
export function heapRegion(length: number): Buffer {
  wasm ??= sodiumWasm()
  if (length > capacity) {
    if (address) wasm._free(address)
    capacity = Math.max(length, 2 * capacity, 4096)
    address = wasm._malloc(capacity)
    if (!address) throw new Error('libsodium could not allocate its heap region')
    region = undefined
  }
  // The heap is replaced when it grows (any libsodium call may grow it): the view follows it.
  if (!region || region.buffer !== wasm.HEAPU8.buffer) region = Buffer.from(wasm.HEAPU8.buffer, address, capacity)
  return region
}

/** BLAKE2b-256 in the region: the hash at HASH_OUT, the key after it, the input at HASH_INPUT. */
export const HASH_BYTES = 32
export const HASH_OUT = 0
const HASH_KEY = HASH_OUT + HASH_BYTES
/** crypto_generichash_KEYBYTES_MAX */
export const HASH_KEY_MAX = 64
export const HASH_INPUT = HASH_KEY + HASH_KEY_MAX

/**
 * BLAKE2b-256 of the `length` bytes the caller wrote at HASH_INPUT, keyed with
 * `key` (or unkeyed); the key is wiped after. Returns the region, the hash at HASH_OUT.
 */
export function hashInRegion(length: number, key: Uint8Array | null): Buffer {
  const heap = heapRegion(HASH_INPUT + length)
  const address = heap.byteOffset
  if (key) heap.set(key, HASH_KEY)
  const failed = wasm!._crypto_generichash(address + HASH_OUT, HASH_BYTES, address + HASH_INPUT, length, 0, key ? address + HASH_KEY : 0, key?.length ?? 0)
  if (key) heap.fill(0, HASH_KEY, HASH_KEY + key.length)
  if (failed) throw new Error('crypto_generichash failed')
  return heap
}
