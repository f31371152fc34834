/** Branded byte strings so a key can't be passed where a nonce is expected. */
declare const brand: unique symbol
export type Branded<T, B extends string> = T & { readonly [brand]: B }

/** 32-byte key-encryption key that wraps tenant data keys. */
export type MasterKey = Branded<Uint8Array, 'MasterKey'>
/** 32-byte XChaCha20-Poly1305 key for one tenant and key version. */
export type DataKey = Branded<Uint8Array, 'DataKey'>
/** 32-byte BLAKE2b key for fingerprints and search indexes. */
export type FingerprintKey = Branded<Uint8Array, 'FingerprintKey'>
/** 32-byte BLAKE2b key for hashing API keys, session keys, nonces and link secrets. */
export type SecretHashKey = Branded<Uint8Array, 'SecretHashKey'>

/** Sealed bytes: 24-byte nonce followed by ciphertext and 16-byte tag. */
export type Sealed = Branded<Uint8Array, 'Sealed'>

export const KEY_BYTES = 32
