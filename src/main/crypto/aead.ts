/**
 * XChaCha20-Poly1305 sealing with associated data. The associated data binds a
 * ciphertext to its context (tenant + token id, tenant + key version), so a
 * row's ciphertext copied into another row fails to open.
 */
import { asBuffer, bytes } from './bytes'
import { randomBytes, randomInto } from './random'
import { sodium, sodiumWasm } from './sodium'
import { heapRegion, REGION_INPUT_LIMIT } from './sodium-heap'
import { KEY_BYTES, type DataKey, type MasterKey, type Sealed } from './types'

const NONCE_BYTES = 24
const TAG_BYTES = 16

/** The keys that seal: a tenant's data key, and the master key (which wraps keys). */
export type SealingKey = DataKey | MasterKey

/** Thrown when a ciphertext fails authentication (wrong key, tampering, wrong context). */
export class DecryptionError extends Error {
  constructor() {
    super('Ciphertext failed authentication.')
    this.name = 'DecryptionError'
  }
}

/** Encrypts `plaintext` under `key`; the result carries its own fresh nonce. */
export function seal(key: SealingKey, plaintext: Uint8Array, associatedData: string | Uint8Array): Sealed {
  const nonce = randomBytes(NONCE_BYTES)
  const ciphertext = sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, bytes(associatedData), null, nonce, key)
  const sealed = new Uint8Array(NONCE_BYTES + ciphertext.length)
  sealed.set(nonce)
  sealed.set(ciphertext, NONCE_BYTES)
  return sealed as Sealed
}

/** Decrypts what `seal` produced; throws DecryptionError if anything was altered. */
export function open(key: SealingKey, sealed: Uint8Array, associatedData: string | Uint8Array): Uint8Array {
  if (sealed.length < NONCE_BYTES + 16) throw new DecryptionError()
  try {
    return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
      null,
      sealed.subarray(NONCE_BYTES),
      bytes(associatedData),
      sealed.subarray(0, NONCE_BYTES),
      key
    )
  } catch {
    throw new DecryptionError()
  }
}

/** Seals a JSON value: nonce ‖ ciphertext ‖ tag, in a Buffer of its own. */
export function sealJson(key: SealingKey, value: unknown, associatedData: string): Sealed & Buffer {
  const json = JSON.stringify(value)
  // Every create seals its token's data: in libsodium's heap, without the wrapper's copies.
  if (json.length <= REGION_INPUT_LIMIT && associatedData.length <= REGION_INPUT_LIMIT && key.length === KEY_BYTES) return sealInHeap(key, json, associatedData)
  return asBuffer(seal(key, Buffer.from(json, 'utf8'), associatedData)) as Sealed & Buffer
}

/** Where `sealInHeap` works in the region: the key, the nonce, the associated data, then the message and after it the ciphertext. */
const SEAL_KEY = 0
const SEAL_NONCE = SEAL_KEY + KEY_BYTES
const SEAL_ASSOCIATED = SEAL_NONCE + NONCE_BYTES

/** `seal` of a JSON text, encoded straight into the heap region; the key and the plaintext are wiped from it after. */
function sealInHeap(key: SealingKey, json: string, associatedData: string): Sealed & Buffer {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: room for the associated data, the message and the ciphertext.
  const heap = heapRegion(SEAL_ASSOCIATED + 3 * associatedData.length + 6 * json.length + TAG_BYTES)
  heap.set(key, SEAL_KEY)
  randomInto(heap, SEAL_NONCE, NONCE_BYTES)
  const associatedLength = heap.write(associatedData, SEAL_ASSOCIATED, 'utf8')
  const message = SEAL_ASSOCIATED + associatedLength
  const messageLength = heap.write(json, message, 'utf8')
  const ciphertext = message + messageLength
  const base = heap.byteOffset
  const failed = sodiumWasm()._crypto_aead_xchacha20poly1305_ietf_encrypt(
    base + ciphertext,
    0,
    base + message,
    messageLength,
    0,
    base + SEAL_ASSOCIATED,
    associatedLength,
    0,
    0,
    base + SEAL_NONCE,
    base + SEAL_KEY
  )
  heap.fill(0, SEAL_KEY, SEAL_NONCE)
  heap.fill(0, message, ciphertext)
  if (failed) throw new Error('crypto_aead_xchacha20poly1305_ietf_encrypt failed')
  const sealed = Buffer.allocUnsafe(NONCE_BYTES + messageLength + TAG_BYTES)
  heap.copy(sealed, 0, SEAL_NONCE, SEAL_NONCE + NONCE_BYTES)
  heap.copy(sealed, NONCE_BYTES, ciphertext, ciphertext + messageLength + TAG_BYTES)
  return sealed as Sealed & Buffer
}

/** Opens a JSON value sealed by `sealJson`. */
export function openJson<T = unknown>(key: SealingKey, sealed: Uint8Array, associatedData: string): T {
  return JSON.parse(asBuffer(open(key, sealed, associatedData)).toString('utf8')) as T
}
