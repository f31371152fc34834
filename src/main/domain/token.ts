/**
 * A token as the vault keeps it, and what building one needs of the vault's
 * keys. The domain decides what a token holds; sealing and keyed hashing are
 * done above it (app/token-crypto.ts), with libsodium.
 */

/** A token as stored: its data sealed, everything else in the clear (none of it sensitive). */
export interface StoredToken {
  tenant_id: string
  id: string
  type: string
  /** The data key version that sealed `sealed_data`. */
  key_version: number
  sealed_data: Uint8Array
  fingerprint: string
  fingerprint_expression: string
  /** The mask expressions: an expression, or an object or array of them; null when the token has none. */
  mask: unknown
  containers: readonly string[]
  metadata: Readonly<Record<string, string>>
  /** The search index expressions; null when none were given. */
  search_indexes: readonly string[] | null
  expires_at: number | null
  /** When the expiry sweep removes the card's CVC; null when the data holds none. */
  cvc_expires_at: number | null
  created_by: string | null
  created_at: number
  modified_by: string | null
  modified_at: number | null
}

/** One search index of a token: the keyed hash of an index expression's value. */
export interface SearchIndexEntry {
  tenant_id: string
  token_id: string
  index_hash: string
}

/** What building and changing tokens needs of the vault's keys. */
export interface TokenKeys {
  /** Seals a token's data under the tenant's current data key. */
  seal(tenantId: string, tokenId: string, data: unknown): Pick<StoredToken, 'key_version' | 'sealed_data'>
  /** The keyed fingerprint of a rendered fingerprint expression, separated by type. */
  fingerprint(tenantId: string, type: string, source: string): string
  /** The keyed hash of a search index value. */
  indexHash(tenantId: string, value: string): string
  /** A new token id (a time-ordered UUID). */
  newId(): string
}

/**
 * A value as a JSON column gives it back. Masks are kept in this form: the
 * desktop's payloads are structured clones, not JSON, and may hold values
 * JSON turns into others (a Date into its ISO string).
 */
export function asStoredJson(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value))
}
