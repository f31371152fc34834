/**
 * Conversions at the libsodium boundary. Node's UTF-8 encoder and zero-copy
 * Buffer views cost less than the wrapper's own string conversions, and these
 * calls sit on every request (API-key hash, token open).
 */

/** UTF-8 bytes of a string; bytes pass through. */
export function bytes(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value
}

/** A Buffer over the same memory (no copy), for Node's encoders. */
export function asBuffer(view: Uint8Array): Buffer {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength)
}
