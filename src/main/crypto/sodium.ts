/**
 * The only libsodium import in the code base. Await `readySodium()` once at
 * start-up; everything else may then call the primitives synchronously.
 */
import sodium from 'libsodium-wrappers'

let ready: Promise<void> | undefined

/** Resolves when the WASM module is initialised (idempotent). */
export function readySodium(): Promise<void> {
  ready ??= sodium.ready
  return ready
}

export { sodium }

/**
 * The WebAssembly module under the wrapper (its `libsodium` property): its heap and
 * the C functions. The wrapper copies every argument into the heap and the result
 * out of it, allocating and freeing each; the primitives on every request's path
 * work in a region of the heap instead (sodium-heap.ts).
 */
export interface SodiumWasm {
  /** The heap; replaced (and the old one detached) when the heap grows. */
  readonly HEAPU8: Uint8Array
  _malloc(size: number): number
  _free(address: number): void
  /** crypto_generichash(out, outlen, in, inlen as two 32-bit halves, key, keylen); 0 on success. */
  _crypto_generichash(out: number, outLength: number, message: number, lengthLow: number, lengthHigh: number, key: number, keyLength: number): number
  /**
   * crypto_aead_xchacha20poly1305_ietf_encrypt(c, clen_p, m, mlen as two 32-bit halves, ad, adlen as two
   * halves, nsec, npub, k): the ciphertext and its 16-byte tag at `c`; 0 on success.
   */
  _crypto_aead_xchacha20poly1305_ietf_encrypt(
    ciphertext: number,
    ciphertextLength: number,
    message: number,
    lengthLow: number,
    lengthHigh: number,
    associatedData: number,
    associatedLengthLow: number,
    associatedLengthHigh: number,
    secretNonce: number,
    nonce: number,
    key: number
  ): number
}

/** The module under the wrapper, once `readySodium()` has resolved. */
export function sodiumWasm(): SodiumWasm {
  return (sodium as unknown as { libsodium: SodiumWasm }).libsodium
}
