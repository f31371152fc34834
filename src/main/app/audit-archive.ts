/**
 * Archiving the audit log: the oldest entries go to a signed export file and
 * then out of the vault, so the log does not grow for ever.
 *
 * An archive (1) verifies the chain, (2) writes the entries created before a
 * date to a new file in the export format (audit-export.ts), fsyncs it and
 * checks it by reading it back, (3) logs that it did, then (4) deletes those
 * entries in short batches through the write queue, each batch moving the
 * chain's anchor to its last entry in the same transaction. So requests keep
 * being served between batches, the vault's chain verifies at every moment, and
 * an archive killed while pruning is completed by the next one (which archives
 * what is left before its date to its own file).
 *
 * The retention sweep (`archive-logs`) archives entries older than the
 * retention into dated files of the archive directory.
 */
import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, open, rm } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { createInterface } from 'node:readline'
import { finished } from 'node:stream/promises'
import type { AuditArchive, AuditArchiveStatus } from '../../shared/ipc'
import { ConflictError, ValidationError } from '../domain/errors'
import { toIsoString } from '../domain/dates'
import { archiveRange, deleteLogsThrough, logMacAt } from '../storage/repositories/logs-archive.repository'
import { chainAnchor, type AuditChain } from './audit-chain'
import { exportSigningKey, requireIntactChain, verifyAuditExport, writeChainRange } from './audit-export'
import { audit, type AuditActor } from './audit'
import type { ServiceContext } from './service-context'

const DAY_MS = 86_400_000
/** The longest audit retention one may set (100 years). */
export const MAX_AUDIT_RETENTION_DAYS = 36_500
/** Entries deleted per transaction: short enough that requests queued behind one wait milliseconds. */
const PRUNE_BATCH = 500

/** A range of the chain, by seq, both ends included. */
export interface SeqRange {
  first: number
  last: number
}

export interface ArchiveRequest {
  /** Epoch ms: the entries created before it are archived. */
  before: number
  /** The file to create (never replaced), or how to name it (and make its folder) once the range is known. */
  file: string | ((range: SeqRange) => Promise<string>)
  /** At most this many entries (the retention sweep writes one file per batch). */
  limit?: number
  /** After each pruned batch: entries pruned so far, of `total`. */
  onProgress?: (pruned: number, total: number) => void
}

export type ArchiveResult = AuditArchive

export interface AuditArchiveOptions {
  /** The tenant the archive's own audit entries belong to (the vault's). */
  tenantId: string
  /** Where the retention sweep and the desktop write archives (`<data dir>/audit-archive`). */
  directory: string
  /** Days entries are kept before the retention sweep archives them; 0 keeps them for ever. */
  retentionDays: () => number
}


/** A file name that sorts by date: `audit-2026-11-26T10-00-00.000Z-seq-1-500.jsonl`. */
export function archiveFileName(now: number, range: SeqRange): string {
  return `audit-${toIsoString(now).replaceAll(':', '-')}-seq-${range.first}-${range.last}.jsonl`
}

/** Days to milliseconds for the retention; `days` ≤ 0 means none. */
export function retentionCutoff(now: number, days: number): number | undefined {
  return days > 0 ? now - days * DAY_MS : undefined
}

export class AuditArchiveService {
  private last: ArchiveResult | null = null
  /** Archives run one at a time (the sweep, the CLI and the GUI may ask at once). */
  private turn: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly context: ServiceContext,
    private readonly chain: AuditChain,
    private readonly options: AuditArchiveOptions
  ) {}

  status(): AuditArchiveStatus {
    return { directory: this.options.directory, retentionDays: this.options.retentionDays(), last: this.last }
  }

  /**
   * Archives the entries created before `request.before` and prunes them;
   * undefined when there are none. `actor` is who asked (null: the retention sweep).
   * @throws ValidationError for a date in the future, ConflictError when the file exists, BrokenChainError
   */
  async archive(actor: AuditActor | null, request: ArchiveRequest): Promise<ArchiveResult | undefined> {
    if (request.before > this.context.clock.now()) throw ValidationError.field('before', 'must not be in the future')
    const run = this.turn.then(() => this.archiveNow(actor, request))
    this.turn = run.catch(() => undefined)
    return run
  }

  /** The retention sweep: archives up to `limit` entries older than the retention into the archive directory; how many. */
  async archiveExpired(now: number, limit: number): Promise<number> {
    const before = retentionCutoff(now, this.options.retentionDays())
    if (before === undefined) return 0
    const result = await this.archive(null, { before, limit, file: (range) => this.fileInDirectory(now, range) })
    return result?.entries ?? 0
  }

  /** The desktop's "Archive now": into a dated file of the archive directory. */
  async archiveToDirectory(actor: AuditActor, before: number): Promise<ArchiveResult | undefined> {
    const now = this.context.clock.now()
    return this.archive(actor, { before, file: (range) => this.fileInDirectory(now, range) })
  }

  private async fileInDirectory(now: number, range: SeqRange): Promise<string> {
    await mkdir(this.options.directory, { recursive: true, mode: 0o700 })
    return join(this.options.directory, archiveFileName(now, range))
  }

  private async archiveNow(actor: AuditActor | null, request: ArchiveRequest): Promise<ArchiveResult | undefined> {
    const { reader, keyring } = this.context
    await requireIntactChain(reader, keyring.auditKeys)
    const anchor = await chainAnchor(reader)
    const range = await archiveRange(reader, request.before, anchor.seq, request.limit)
    if (!range) return undefined
    const file = typeof request.file === 'string' ? request.file : await request.file(range)
    const now = this.context.clock.now()
    const sha256 = await this.writeVerifiedFile(file, range, { until: request.before, now })
    const result: ArchiveResult = {
      file,
      entries: range.last - range.first + 1,
      firstSeq: range.first,
      lastSeq: range.last,
      sha256,
      before: toIsoString(request.before),
      archivedAt: toIsoString(now)
    }
    await this.record(actor, result)
    await this.prune(range, request.onProgress)
    this.last = result
    return result
  }

  /** Writes the export of `range` to a new file, fsyncs it and reads it back; returns its SHA-256. Leaves no file on failure. */
  private async writeVerifiedFile(file: string, range: SeqRange, labels: { until: number; now: number }): Promise<string> {
    const { reader, keyring } = this.context
    // 'wx': never replace a file; it may hold the only copy of entries pruned already.
    const out = createWriteStream(file, { flags: 'wx', mode: 0o600 })
    await new Promise<void>((resolve, reject) => out.once('open', () => resolve()).once('error', reject)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') throw new ConflictError(`${file} already exists; an archive never replaces a file. Choose another name.`)
      throw error
    })
    try {
      await writeChainRange(reader, keyring.auditKeys, out, range, labels)
      out.end()
      await finished(out)
      await syncToDisk(file)
      const { sha256, intact } = await readBack(file, Buffer.from(exportSigningKey(keyring.auditKeys).publicKey, 'base64'), range)
      if (!intact) throw new Error('The archive file does not verify after writing it (is the disk failing?); nothing was pruned.')
      return sha256
    } catch (error) {
      out.destroy()
      await rm(file, { force: true })
      throw error
    }
  }

  private record(actor: AuditActor | null, result: ArchiveResult): Promise<void> {
    const message = `Archived ${result.entries} entries through seq ${result.lastSeq} (created before ${result.before}) to ${basename(result.file)} (sha256 ${result.sha256})`
    return audit(this.context.writes, this.context.clock.now(), [
      { actor, tenantId: this.options.tenantId, entityType: 'log', entityId: this.options.tenantId, operation: 'archive', message }
    ])
  }

  /** Deletes the archived entries, a batch per transaction, the anchor following each batch. */
  private async prune(range: SeqRange, onProgress?: (pruned: number, total: number) => void): Promise<void> {
    const total = range.last - range.first + 1
    for (let through = range.first - 1; through < range.last; ) {
      const next = Math.min(through + PRUNE_BATCH, range.last)
      await this.context.writes.run(async (trx) => {
        const mac = await logMacAt(trx, next)
        if (!mac) throw new Error(`Entry ${next} is missing; the archive stops (run \`tessera logs verify\`).`)
        await deleteLogsThrough(trx, next)
        await this.chain.moveAnchor(trx, { seq: next, mac })
      }, next - through)
      through = next
      onProgress?.(through - range.first + 1, total)
    }
  }
}

/** fsync the file, and its folder so its name survives a power loss too (not possible on every system). */
async function syncToDisk(file: string): Promise<void> {
  const handle = await open(file, 'r+')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
  const folder = await open(join(file, '..'), 'r').catch(() => undefined)
  await folder?.sync().catch(() => undefined)
  await folder?.close()
}

/** Reads an archive back: its SHA-256, and whether it verifies as exactly `range`, signed with the vault's key. */
async function readBack(file: string, publicKey: Buffer, range: SeqRange): Promise<{ sha256: string; intact: boolean }> {
  const input = createReadStream(file)
  const hash = createHash('sha256')
  input.on('data', (chunk) => hash.update(chunk))
  const report = await verifyAuditExport(createInterface({ input, crlfDelay: Infinity }), publicKey).finally(() => input.destroy())
  const intact = report.intact && report.firstSeq === range.first && report.lastSeq === range.last
  return { sha256: hash.digest('hex'), intact }
}
