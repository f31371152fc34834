/**
 * Token data and libsodium: sealing and opening a token's data with the
 * tenant's data keys, and the keyed hashes behind fingerprints and search
 * indexes. The associated data binds a ciphertext to its tenant and id, so
 * it cannot be moved to another row.
 */
import { openJson, sealJson } from '../crypto/aead'
import { keyedHash } from '../crypto/hashing'
import { newTimeOrderedId } from '../crypto/random'
import type { StoredToken, TokenKeys } from '../domain/token'
import type { Keyring } from './keyring'

/** Associated data binding a token's ciphertext to its tenant and id. */
export function tokenAssociatedData(tenantId: string, tokenId: string): string {
  return `token:${tenantId}:${tokenId}`
}

/** Associated data binding a token intent's ciphertext to its tenant and id (apart from tokens': an intent id cannot pass for a token's). */
export function tokenIntentAssociatedData(tenantId: string, intentId: string): string {
  return `token-intent:${tenantId}:${intentId}`
}

/** Associated data binding a stored idempotent response to its tenant and row (the reservation id, unique to the row). */
export function idempotentResponseAssociatedData(tenantId: string, reservation: string): string {
  return `idempotent-response:${tenantId}:${reservation}`
}

/** The token crypto of a vault's keyring. */
export function tokenKeys(keyring: Keyring): TokenKeys {
  return {
    seal(tenantId, tokenId, data) {
      const { version, key } = keyring.currentDataKey(tenantId)
      return { key_version: version, sealed_data: sealJson(key, data, tokenAssociatedData(tenantId, tokenId)) }
    },
    // Separated by type, so equal data of two types never collide.
    fingerprint: (tenantId, type, source) => keyedHash(keyring.fingerprintKey(tenantId), `${type}\u0000${source}`),
    indexHash: (tenantId, value) => keyedHash(keyring.fingerprintKey(tenantId), `index\u0000${value}`),
    newId: newTimeOrderedId
  }
}

/** A token's plaintext. */
export function openToken(keyring: Keyring, token: Pick<StoredToken, 'tenant_id' | 'id' | 'key_version' | 'sealed_data'>): unknown {
  return openJson(keyring.dataKey(token.tenant_id, token.key_version), token.sealed_data, tokenAssociatedData(token.tenant_id, token.id))
}
