/**
 * Envelope encryption: a 32-byte master key wraps the vault's secret-hash key,
 * its audit keys and each tenant's data and fingerprint keys. Only wrapped keys
 * are stored; the master key itself lives outside the database
 * (bootstrap/master-key.ts keeps it in a file or the environment).
 */
import { open, seal } from './aead'
import { keyedHash } from './hashing'
import { randomBytes } from './random'
import { KEY_BYTES, type MasterKey } from './types'

/** A fresh random master key. */
export function generateMasterKey(): MasterKey {
  return randomBytes(KEY_BYTES) as MasterKey
}

/**
 * A short public name of a key: BLAKE2b keyed by the key itself over a fixed
 * label, 16 hex characters. Tells key versions apart in status and reports,
 * and reveals nothing of the key.
 */
export function keyCheckValue(key: Uint8Array): string {
  return keyedHash(key, 'tessera:key-check-value').slice(0, 16)
}

/** Wraps a key under the master key, bound to a label naming its purpose and owner. */
export function wrapKey(master: MasterKey, key: Uint8Array, label: string): Uint8Array {
  return seal(master, key, `tessera:key:${label}`)
}

/** Unwraps a key; a wrong master key or label is a DecryptionError. */
export function unwrapKey(master: MasterKey, wrapped: Uint8Array, label: string): Uint8Array {
  return open(master, wrapped, `tessera:key:${label}`)
}
