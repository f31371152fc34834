/**
 * Audit log exports an auditor can check without the vault. A MAC needs its
 * key, so an export carries its own proof instead: an unkeyed BLAKE2b hash
 * chain over its entries, anchored in its header line, whose last link is
 * signed with the vault's Ed25519 audit signing key. The file carries the
 * public key; `tessera logs verify --file` prints its fingerprint, and
 * `--public-key` pins it, so a file re-signed with another key is refused.
 *
 * The file is JSON Lines: a header (format, range, the predecessor of the
 * first entry in the vault's chain, the public key), one line per entry (its
 * content, its vault MAC and its hash link) and a signed head. An export of a
 * date range stands alone: its header records the MAC of the entry before it.
 * Only an intact chain is exported.
 */
import { once } from 'node:events'
import type { Writable } from 'node:stream'
import type { Reader } from '../storage/connections'
import { z } from 'zod'
import { anchorHash, entryHash, keyFingerprint, signHead, signingKeys, verifyHead, type ChainedEntry } from '../crypto/audit'
import { chainedLogBefore, listChainedLogs, logSeqRange, type ChainedLogRow } from '../storage/repositories/logs.repository'
import { chainAnchor, verifyAuditChain, type ChainReport } from './audit-chain'
import { toIsoString } from '../domain/dates'
import type { AuditKeys } from './keyring'

export const EXPORT_FORMAT = 'tessera-audit-log'
const PAGE = 1000

/** Refusal to export: the vault's chain is broken. */
export class BrokenChainError extends Error {
  constructor(readonly report: Extract<ChainReport, { intact: false }>) {
    super(`The audit log is broken at seq ${report.seq}: ${report.problem}.`)
    this.name = 'BrokenChainError'
  }
}

export interface ExportOptions {
  /** Epoch ms: from the first entry at or after it. */
  since?: number
  /** Epoch ms: to the last entry before it. */
  until?: number
  now: number
}

export interface ExportSummary {
  entries: number
  firstSeq: number | null
  lastSeq: number | null
  fingerprint: string
}

/** The public half of the key that signs exports, and its fingerprint: what an auditor pins. */
export function exportSigningKey(keys: AuditKeys): { fingerprint: string; publicKey: string } {
  const { publicKey } = signingKeys(keys.signingSeed)
  return { fingerprint: keyFingerprint(publicKey), publicKey: publicKey.toString('base64') }
}

async function writeLine(out: Writable, line: string): Promise<void> {
  if (!out.write(line + '\n')) await once(out, 'drain')
}

function entryLine(row: ChainedLogRow, hash: Buffer): string {
  return entryText({
    seq: Number(row.seq),
    created_at: toIsoString(Number(row.created_at)),
    tenant_id: row.tenant_id,
    actor_type: row.actor_type,
    actor_id: row.actor_id,
    entity_type: row.entity_type,
    entity_id: row.entity_id,
    operation: row.operation,
    message: row.message,
    count: row.count === null ? null : Number(row.count),
    trace_id: row.trace_id,
    mac: row.mac!.toString('hex'),
    hash: hash.toString('hex')
  })
}

/**
 * The one way an entry line is written. Verification requires each line to be
 * exactly this, since its hash covers the parsed values: a line reworded
 * (duplicate keys, escapes, spacing) would otherwise still verify.
 */
function entryText(entry: ExportedEntry): string {
  const { seq, created_at, tenant_id, actor_type, actor_id, entity_type, entity_id, operation, message, count, trace_id, mac, hash } = entry
  // An entry from before trace ids were recorded has none: JSON.stringify leaves an undefined trace_id out.
  return JSON.stringify({ seq, created_at, tenant_id, actor_type, actor_id, entity_type, entity_id, operation, message, count, trace_id, mac, hash })
}

/**
 * Writes the entries from `since` to `until` (contiguous in chain order) to
 * `out`; refuses with BrokenChainError when the vault's chain does not verify.
 */
export async function writeAuditExport(db: Reader, keys: AuditKeys, out: Writable, options: ExportOptions): Promise<ExportSummary> {
  await requireIntactChain(db, keys)
  return writeChainRange(db, keys, out, await logSeqRange(db, options.since, options.until), options)
}

/** @throws BrokenChainError when the vault's chain does not verify */
export async function requireIntactChain(db: Reader, keys: AuditKeys): Promise<void> {
  const report = await verifyAuditChain(db, keys.mac)
  if (!report.intact) throw new BrokenChainError(report)
}

/**
 * Writes the entries from seq `range.first` to `range.last` of a chain the
 * caller has verified (none without a range); `options` only label the header.
 */
export async function writeChainRange(
  db: Reader,
  keys: AuditKeys,
  out: Writable,
  range: { first: number; last: number } | undefined,
  options: ExportOptions
): Promise<ExportSummary> {
  const before = range ? await chainedLogBefore(db, range.first) : undefined
  // The first stored entry follows the anchor (the last archived entry, or the chain's genesis).
  const previous = before?.mac ? { seq: Number(before.seq), mac: before.mac } : await chainAnchor(db)
  const { publicKey, secretKey } = signingKeys(keys.signingSeed)
  const fingerprint = keyFingerprint(publicKey)
  const header = JSON.stringify({
    format: EXPORT_FORMAT,
    version: 1,
    exported_at: toIsoString(options.now),
    since: options.since === undefined ? null : toIsoString(options.since),
    until: options.until === undefined ? null : toIsoString(options.until),
    previous: { seq: previous.seq, mac: previous.mac.toString('hex') },
    public_key: publicKey.toString('base64'),
    key_fingerprint: fingerprint
  })
  await writeLine(out, header)
  let hash = anchorHash(header)
  let entries = 0
  for (let after = range ? range.first - 1 : 0; range; ) {
    const rows = await listChainedLogs(db, after, PAGE, range.last)
    if (rows.length === 0) break
    for (const row of rows) {
      // Seqs are gapless; a gap here means an archive pruned entries while this export read them.
      if (Number(row.seq) !== ++after) throw new Error(`Entry ${after} vanished while the export read the log (an archive pruned it); export again.`)
      hash = entryHash(hash, row, row.mac!)
      await writeLine(out, entryLine(row, hash))
    }
    entries += rows.length
  }
  const head = { seq: range?.last ?? previous.seq, entries, hash: hash.toString('hex') }
  await writeLine(out, JSON.stringify({ head, signature: signHead(secretKey, hash).toString('base64') }))
  return { entries, firstSeq: range?.first ?? null, lastSeq: range?.last ?? null, fingerprint }
}

const hex = (bytes: number) => z.string().regex(new RegExp(`^[0-9a-f]{${2 * bytes}}$`))
const seq = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)
const nullableText = z.string().nullable()

const headerSchema = z.object({
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(1),
  exported_at: z.iso.datetime(),
  since: nullableText,
  until: nullableText,
  previous: z.object({ seq, mac: hex(32) }),
  // Base64 of a 32-byte Ed25519 public key.
  public_key: z.string().regex(/^[A-Za-z0-9+/]{43}=$/)
})

const entrySchema = z.strictObject({
  seq,
  created_at: z.string().refine((value) => !Number.isNaN(Date.parse(value))),
  tenant_id: z.string(),
  actor_type: nullableText,
  actor_id: nullableText,
  entity_type: z.string(),
  entity_id: z.string(),
  operation: z.string(),
  message: z.string(),
  count: seq.nullable(),
  // Absent in exports made before trace ids were recorded.
  trace_id: nullableText.optional(),
  mac: hex(32),
  hash: hex(32)
})

type ExportedEntry = z.infer<typeof entrySchema>

/** The longest line an export holds (an entry is far shorter): a verifier reads no further into a line. */
export const MAX_EXPORT_LINE_CHARS = 1 << 20

const headSchema = z.strictObject({
  head: z.strictObject({ seq, entries: seq, hash: hex(32) }),
  signature: z.string()
})

/** What `verifyAuditExport` found. */
export type ExportReport =
  | { intact: true; entries: number; firstSeq: number | null; lastSeq: number | null; exportedAt: string; fingerprint: string; publicKey: string }
  | { intact: false; line: number; seq?: number; problem: string; fingerprint?: string }

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function parseLine<T>(schema: z.ZodType<T>, value: unknown): T | undefined {
  const parsed = schema.safeParse(value)
  return parsed.success ? parsed.data : undefined
}

/**
 * Checks an export offline, line by line: the hash chain from the header to
 * the head, and the head's signature. With `pinnedKey` (a public key the
 * auditor holds), a file signed by any other key fails.
 */
export async function verifyAuditExport(lines: AsyncIterable<string>, pinnedKey?: Uint8Array): Promise<ExportReport> {
  let lineNumber = 0
  let header: z.infer<typeof headerSchema> | undefined
  let publicKey: Buffer = Buffer.alloc(0)
  let fingerprint: string | undefined
  let hash: Buffer = Buffer.alloc(0)
  let previousSeq = 0
  let firstSeq: number | null = null
  let entries = 0
  let head: z.infer<typeof headSchema> | undefined
  const broken = (problem: string, seqOf?: number): ExportReport => ({ intact: false, line: lineNumber, seq: seqOf, problem, fingerprint })

  for await (const text of lines) {
    lineNumber++
    if (text.length > MAX_EXPORT_LINE_CHARS) return broken(`the line is longer than ${MAX_EXPORT_LINE_CHARS} characters`)
    if (text === '') continue
    if (head) return broken('there is content after the signed head')
    const value = parseJson(text)
    if (!header) {
      header = parseLine(headerSchema, value)
      if (!header) return broken(`it is not the header of a ${EXPORT_FORMAT} export`)
      publicKey = Buffer.from(header.public_key, 'base64')
      fingerprint = keyFingerprint(publicKey)
      if (pinnedKey && !publicKey.equals(pinnedKey)) return broken(`the export is signed by key ${fingerprint}, not by the pinned key ${keyFingerprint(pinnedKey)}`)
      hash = anchorHash(text)
      previousSeq = header.previous.seq
      continue
    }
    if (typeof value === 'object' && value !== null && 'head' in value) {
      head = parseLine(headSchema, value)
      if (!head || text !== JSON.stringify({ head: head.head, signature: head.signature })) return broken('the head line is malformed')
      continue
    }
    const entry = parseLine(entrySchema, value)
    if (!entry) return broken('the line is not a well-formed entry')
    const chained: ChainedEntry = { ...entry, created_at: Date.parse(entry.created_at) }
    const link = entryHash(hash, chained, Buffer.from(entry.mac, 'hex'))
    if (link.toString('hex') !== entry.hash) {
      if (entry.seq > previousSeq + 1) return broken(`the entries before it (seq ${previousSeq + 1}–${entry.seq - 1}) are missing`, entry.seq)
      if (entry.seq <= previousSeq) return broken('it is out of order', entry.seq)
      return broken(entries === 0 ? 'it or the header was changed' : 'it was changed (it no longer matches its hash)', entry.seq)
    }
    if (text !== entryText({ ...entry, created_at: toIsoString(chained.created_at) })) return broken('it was changed (it is not written as the export writes it)', entry.seq)
    hash = link
    previousSeq = entry.seq
    firstSeq ??= entry.seq
    entries++
  }
  if (!header) return broken('the file is empty')
  if (!head) return broken('the signed head is missing (the file was cut short)')
  if (head.head.hash !== hash.toString('hex') || head.head.entries !== entries) {
    return broken('the head does not match the entries (entries were added, removed or changed and the hashes recomputed)')
  }
  if (!verifyHead(publicKey, hash, Buffer.from(head.signature, 'base64'))) return broken('the signature of the head is not valid')
  return { intact: true, entries, firstSeq, lastSeq: entries ? previousSeq : null, exportedAt: header.exported_at, fingerprint: fingerprint!, publicKey: header.public_key }
}
