/**
 * The audit log's cryptography. Each entry carries a keyed BLAKE2b MAC over
 * its content and its predecessor's MAC, so an edited, deleted, inserted or
 * reordered entry breaks the chain. An export carries an unkeyed BLAKE2b hash
 * chain over its entries whose head is signed with Ed25519, so it can be
 * checked without the vault.
 *
 * Entries are encoded compactly and unambiguously (integers as 8 bytes, text
 * length-prefixed, null told apart from "") into one reused buffer: the MAC
 * is computed for every entry in the writer, on the hot path.
 */
import { asBuffer, bytes } from './bytes'
import { sodium } from './sodium'
import type { Branded } from './types'

/** 32-byte BLAKE2b key of the audit chain's MACs. */
export type AuditMacKey = Branded<Uint8Array, 'AuditMacKey'>
/** 32-byte seed of the vault's Ed25519 key that signs exports. */
export type AuditSigningSeed = Branded<Uint8Array, 'AuditSigningSeed'>

export const MAC_BYTES = 32

/** The predecessor of the first entry of the chain. */
export const GENESIS_MAC: Buffer = Buffer.alloc(MAC_BYTES)

/** Every field of a log entry a reader relies on, as stored. */
export interface ChainedEntry {
  seq: number
  tenant_id: string
  actor_id: string | null
  actor_type: string | null
  entity_type: string
  entity_id: string
  operation: string
  message: string
  created_at: number
  count: number | null
}

const FORMAT_VERSION = 1
const TEXT_FIELDS = ['tenant_id', 'actor_id', 'actor_type', 'entity_type', 'entity_id', 'operation', 'message'] as const

let scratch = Buffer.allocUnsafe(4096)

function writeInteger(value: number, offset: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError('Audit entries hold only non-negative integers')
  scratch.writeUInt32BE(Math.floor(value / 0x1_0000_0000), offset)
  scratch.writeUInt32BE(value >>> 0, offset + 4)
  return offset + 8
}

function writeText(value: string | null, offset: number): number {
  if (value === null) {
    scratch[offset] = 0
    return offset + 1
  }
  scratch[offset] = 1
  const length = scratch.write(value, offset + 5, 'utf8')
  scratch.writeUInt32BE(length, offset + 1)
  return offset + 5 + length
}

/**
 * `version ‖ previous ‖ seq ‖ text fields ‖ created_at ‖ count ‖ suffix`, in
 * the shared scratch buffer; valid until the next call.
 */
function encode(previous: Uint8Array, entry: ChainedEntry, suffix?: Uint8Array): Buffer {
  let bound = 1 + previous.length + 8 + 8 + 9 + (suffix?.length ?? 0)
  for (const field of TEXT_FIELDS) bound += 5 + 3 * (entry[field]?.length ?? 0)
  if (scratch.length < bound) scratch = Buffer.allocUnsafe(Math.max(bound, 2 * scratch.length))
  scratch[0] = FORMAT_VERSION
  scratch.set(previous, 1)
  let offset = writeInteger(entry.seq, 1 + previous.length)
  for (const field of TEXT_FIELDS) offset = writeText(entry[field], offset)
  offset = writeInteger(entry.created_at, offset)
  if (entry.count === null) scratch[offset++] = 0
  else {
    scratch[offset] = 1
    offset = writeInteger(entry.count, offset + 1)
  }
  if (suffix) {
    scratch.set(suffix, offset)
    offset += suffix.length
  }
  return scratch.subarray(0, offset)
}

/** The MAC of `entry` chained to its predecessor's MAC. */
export function entryMac(key: AuditMacKey, previous: Uint8Array, entry: ChainedEntry): Buffer {
  return asBuffer(sodium.crypto_generichash(MAC_BYTES, encode(previous, entry), key))
}

/** The MAC that vouches for a chain checkpoint (the last entry's seq and MAC at that time). */
export function checkpointMac(key: AuditMacKey, seq: number, mac: Uint8Array): Buffer {
  const message = Buffer.alloc(8 + 8 + mac.length)
  message.write('tessera:', 0, 'latin1')
  message.writeUInt32BE(Math.floor(seq / 0x1_0000_0000), 8)
  message.writeUInt32BE(seq >>> 0, 12)
  message.set(mac, 16)
  return asBuffer(sodium.crypto_generichash(MAC_BYTES, message, key))
}

/** An export's unkeyed link: the hash of the entry, its vault MAC and the previous link. */
export function entryHash(previous: Uint8Array, entry: ChainedEntry, mac: Uint8Array): Buffer {
  return asBuffer(sodium.crypto_generichash(MAC_BYTES, encode(previous, entry, mac), null))
}

/** The first link of an export's hash chain, binding the export's header. */
export function anchorHash(header: string): Buffer {
  return asBuffer(sodium.crypto_generichash(MAC_BYTES, bytes(`tessera:audit-export:${header}`), null))
}

export interface SigningKeys {
  publicKey: Buffer
  secretKey: Uint8Array
}

export function signingKeys(seed: AuditSigningSeed): SigningKeys {
  const pair = sodium.crypto_sign_seed_keypair(seed)
  return { publicKey: Buffer.from(pair.publicKey), secretKey: pair.privateKey }
}

/** Ed25519 signature of an export's head hash. */
export function signHead(secretKey: Uint8Array, head: Uint8Array): Buffer {
  return Buffer.from(sodium.crypto_sign_detached(head, secretKey))
}

/** Whether `signature` is `publicKey`'s signature of `head`; false for malformed input. */
export function verifyHead(publicKey: Uint8Array, head: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== sodium.crypto_sign_PUBLICKEYBYTES || signature.length !== sodium.crypto_sign_BYTES) return false
  try {
    return sodium.crypto_sign_verify_detached(signature, head, publicKey)
  } catch {
    return false
  }
}

/** A short, readable fingerprint of a public key (BLAKE2b-128, hex in groups of four). */
export function keyFingerprint(publicKey: Uint8Array): string {
  const digest = asBuffer(sodium.crypto_generichash(16, publicKey, null)).toString('hex')
  return digest.match(/.{4}/g)!.join(':')
}
