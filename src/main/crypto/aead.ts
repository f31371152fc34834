/**
 * XChaCha20-Poly1305 sealing with associated data. The associated data binds a
 * ciphertext to its context (tenant + token id, tenant + key version), so a
 * row's ciphertext copied into another row fails to open.
 */
import { asBuffer, bytes } from './bytes'
import { randomBytes } from './random'
import { sodium } from './sodium'
import type { DataKey, MasterKey, Sealed } from './types'

const NONCE_BYTES = 24

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

/** Seals a JSON value. */
export function sealJson(key: SealingKey, value: unknown, associatedData: string): Sealed {
  return seal(key, Buffer.from(JSON.stringify(value), 'utf8'), associatedData)
}

/** Opens a JSON value sealed by `sealJson`. */
export function openJson<T = unknown>(key: SealingKey, sealed: Uint8Array, associatedData: string): T {
  return JSON.parse(asBuffer(open(key, sealed, associatedData)).toString('utf8')) as T
}
