/**
 * The audit log's cryptography. Each entry carries a keyed BLAKE2b MAC over
 * its content and its predecessor's MAC, so an edited, deleted, inserted or
 * reordered entry breaks the chain. An export carries an unkeyed BLAKE2b hash
 * chain over its entries whose head is signed with Ed25519, so it can be
 * checked without the vault.
 *
 * Entries are encoded compactly and unambiguously (integers in decimal, text
 * length-prefixed, null told apart from "") straight into libsodium's heap (sodium-heap.ts):
 * the MAC is computed for every entry in the writer, on the hot path.
 */
import type { AuditEntry } from '../domain/audit-entry'
import { asBuffer, bytes } from './bytes'
import { sodium } from './sodium'
import { HASH_INPUT, HASH_OUT, hashInRegion, heapRegion } from './sodium-heap'
import type { Branded } from './types'

/** 32-byte BLAKE2b key of the audit chain's MACs. */
export type AuditMacKey = Branded<Uint8Array, 'AuditMacKey'>
/** 32-byte seed of the vault's Ed25519 key that signs exports. */
export type AuditSigningSeed = Branded<Uint8Array, 'AuditSigningSeed'>

export const MAC_BYTES = 32

/** The predecessor of the first entry of the chain. */
export const GENESIS_MAC: Buffer = Buffer.alloc(MAC_BYTES)

/** Every field of a log entry a reader relies on, as stored. */
export interface ChainedEntry extends AuditEntry {
  seq: number
}

const FORMAT_VERSION = 1

/** Length-prefixed (in UTF-16 code units, which survive the UTF-8 round trip), so no two values read alike; null is `-`. */
function text(value: string | null): string {
  return value === null ? '-' : `${value.length}:${value}`
}

/** Where entries are encoded in the heap region: where its hash reads its input. */
const MESSAGE = HASH_INPUT

/**
 * `version ‖ previous ‖ UTF-8 of the canonical text ‖ suffix`, written into the
 * heap region at MESSAGE; returns its length. The canonical text is one template
 * string (integers in decimal, text length-prefixed): one UTF-8 write costs far
 * less than a write per field.
 */
function encode(previous: Uint8Array, entry: ChainedEntry, suffix?: Uint8Array): number {
  const canonical =
    `${entry.seq}|${entry.created_at}|${entry.count ?? '-'}|${text(entry.tenant_id)}${text(entry.actor_id)}${text(entry.actor_type)}` +
    `${text(entry.entity_type)}${text(entry.entity_id)}${text(entry.operation)}${text(entry.message)}` +
    // The message is length-prefixed, so anything after it can only be the trace id.
    (entry.trace_id == null ? '' : text(entry.trace_id))
  const head = 1 + previous.length
  const heap = heapRegion(MESSAGE + head + 3 * canonical.length + (suffix?.length ?? 0))
  heap[MESSAGE] = FORMAT_VERSION
  heap.set(previous, MESSAGE + 1)
  let end = MESSAGE + head + heap.write(canonical, MESSAGE + head, 'utf8')
  if (suffix) {
    heap.set(suffix, end)
    end += suffix.length
  }
  return end - MESSAGE
}

/** BLAKE2b-256 of the `length` bytes encoded in the region, keyed with `key` (or unkeyed), as a Buffer of its own. */
function hashEncoded(length: number, key: Uint8Array | null): Buffer {
  const hash = Buffer.allocUnsafe(MAC_BYTES)
  hashInRegion(length, key).copy(hash, 0, HASH_OUT, HASH_OUT + MAC_BYTES)
  return hash
}

/** The MAC of `entry` chained to its predecessor's MAC. */
export function entryMac(key: AuditMacKey, previous: Uint8Array, entry: ChainedEntry): Buffer {
  return hashEncoded(encode(previous, entry), key)
}

/** A position in the chain: an entry's seq and MAC. */
export interface ChainPosition {
  seq: number
  mac: Uint8Array
}

function writeSeq(message: Buffer, seq: number, offset: number): void {
  message.writeUInt32BE(Math.floor(seq / 0x1_0000_0000), offset)
  message.writeUInt32BE(seq >>> 0, offset + 4)
}

/**
 * The MAC that vouches for a chain checkpoint (the last entry's seq and MAC
 * at that time) and for the chain's anchor (the last archived entry, where
 * the stored chain starts). Without an anchor (nothing archived) the message
 * is the checkpoint alone, as before archiving existed.
 */
export function checkpointMac(key: AuditMacKey, seq: number, mac: Uint8Array, anchor?: ChainPosition): Buffer {
  const anchored = anchor !== undefined && anchor.seq > 0
  const message = Buffer.alloc(8 + 8 + mac.length + (anchored ? 8 + anchor.mac.length : 0))
  message.write('tessera:', 0, 'latin1')
  writeSeq(message, seq, 8)
  message.set(mac, 16)
  if (anchored) {
    writeSeq(message, anchor.seq, 16 + mac.length)
    message.set(anchor.mac, 24 + mac.length)
  }
  return asBuffer(sodium.crypto_generichash(MAC_BYTES, message, key))
}

/** An export's unkeyed link: the hash of the entry, its vault MAC and the previous link. */
export function entryHash(previous: Uint8Array, entry: ChainedEntry, mac: Uint8Array): Buffer {
  return hashEncoded(encode(previous, entry, mac), null)
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
