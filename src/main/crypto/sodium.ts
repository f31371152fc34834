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
