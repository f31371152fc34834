/**
 * The audit log's chain (tamper evidence). The writer stamps each new
 * entry, in commit order, with the next `seq` and a keyed BLAKE2b MAC over
 * its content and its predecessor's MAC (see crypto/audit.ts). A file vault
 * has one writer, which keeps the chain's head in memory; a team vault's
 * instances each take the chain's lock per transaction and continue from the
 * head committed last (`resume`). Anyone who can
 * write the database file but lacks the key cannot edit, delete, insert or
 * reorder an entry without breaking the chain from that entry on.
 *
 * Deleting the newest entries leaves a shorter chain that is still intact, so
 * the chain's head is also recorded in `log_chain` as a MAC'd checkpoint (by
 * the `index-logs` sweep every few seconds and when the vault closes): a chain
 * that ends before its checkpoint was cut.
 *
 * An archive prunes the oldest entries (audit-archive.ts); the stored chain
 * then starts from an anchor, the last archived entry's seq and MAC, kept with
 * the checkpoint and covered by its tag, so the anchor cannot be moved (to
 * drop entries that were never archived) without the key.
 */
import { inTransaction, type Db, type Reader, type Tx, type Writer } from '../storage/connections'
import { checkpointMac, entryMac, GENESIS_MAC, type AuditMacKey } from '../crypto/audit'
import { CannotUnlockError } from '../domain/errors'
import type { RowSealer, RunScript } from '../storage/write-queue'
import type { ScriptGuard } from '../storage/sql-script'
import {
  auditChainTurnGuard,
  findChainCheckpoint,
  hasChainedLogs,
  lastChainedLog,
  listChainedLogs,
  saveChainCheckpoint,
  setLogMacs,
  takeAuditChainTurn,
  type ChainCheckpoint,
  type ChainedLogRow,
  type LogRow
} from '../storage/repositories/logs.repository'
import { findVault, lockVaultRow } from '../storage/repositories/vault.repository'
import type { Keyring } from './keyring'

/** The chain's state after an entry. */
export interface ChainLink {
  seq: number
  mac: Buffer
}

/** Before the first entry. */
export const GENESIS: ChainLink = { seq: 0, mac: GENESIS_MAC }

/** Entries read per query while verifying or upgrading. */
const PAGE = 1000

/**
 * Seals log rows for the write queue: explicit, gapless `seq` and the chained MAC.
 * On a team vault (`shared`) several processes append to one chain: each batch
 * first takes the chain's turn and continues from the head as committed.
 */
export class AuditChain implements RowSealer<ChainLink> {
  readonly resume?: (run: RunScript) => Promise<{ link: ChainLink; othersAppended: boolean }>
  readonly expectHead?: (link: ChainLink) => ScriptGuard

  constructor(
    private readonly key: AuditMacKey,
    public head: ChainLink,
    shared = false
  ) {
    if (shared) {
      this.resume = async (run) => {
        const link = await resumeSharedChain(run)
        return { link, othersAppended: link.seq !== this.head.seq || !link.mac.equals(this.head.mac) }
      }
      this.expectHead = expectSharedHead
    }
  }

  seal(rows: readonly object[], link: ChainLink): ChainLink {
    let { seq, mac } = link
    for (const row of rows as LogRow[]) {
      row.seq = ++seq
      row.mac = mac = entryMac(this.key, mac, row as Required<LogRow>)
    }
    return { seq, mac }
  }

  advance(link: ChainLink): void {
    this.head = link
  }

  /**
   * Records the newest committed entry as the checkpoint; runs inside a write
   * transaction. A checkpoint altered outside Tessera is left as it is: vouching
   * for it again would launder the alteration.
   */
  async checkpoint(trx: Tx): Promise<void> {
    const stored = await findChainCheckpoint(trx)
    if (stored && !checkpointIntact(this.key, stored)) return
    const anchor = anchorOf(stored)
    await writeCheckpoint(trx, this.key, await committedHead(trx, anchor), anchor)
  }

  /** Moves the anchor to the last entry an archive has just pruned; in the prune's transaction. */
  async moveAnchor(trx: Tx, anchor: ChainLink): Promise<void> {
    const stored = await findChainCheckpoint(trx)
    if (stored && !checkpointIntact(this.key, stored)) throw new Error('The audit chain checkpoint was altered; the archive stops.')
    await writeCheckpoint(trx, this.key, await committedHead(trx, anchor), anchor)
  }
}

/** Where the stored chain starts: the last archived entry, or GENESIS when nothing was archived. */
function anchorOf(checkpoint: ChainCheckpoint | undefined): ChainLink {
  const seq = Number(checkpoint?.anchor_seq ?? 0)
  return seq > 0 && checkpoint?.anchor_mac ? { seq, mac: checkpoint.anchor_mac } : GENESIS
}

/** The vault's chain anchor (see anchorOf). */
export async function chainAnchor(db: Db): Promise<ChainLink> {
  return anchorOf(await findChainCheckpoint(db))
}

function checkpointIntact(key: AuditMacKey, checkpoint: ChainCheckpoint): boolean {
  return checkpointMac(key, Number(checkpoint.checkpoint_seq), checkpoint.checkpoint_mac, anchorOf(checkpoint)).equals(checkpoint.checkpoint_tag)
}

/** Waits for the chain's turn (until the transaction ends), then its committed head. */
async function resumeSharedChain(run: RunScript): Promise<ChainLink> {
  const { checkpoint, last } = await takeAuditChainTurn(run)
  return headOf(last, anchorOf(checkpoint))
}

/** The chain's turn, for a batch sealed from `link` in one trip: it fails if the committed head is another. */
function expectSharedHead(link: ChainLink): ScriptGuard {
  return auditChainTurnGuard(link.seq, link.mac)
}

/** The newest entry, or the anchor when every entry was archived. */
async function committedHead(db: Db, anchor: ChainLink): Promise<ChainLink> {
  return headOf(await lastChainedLog(db), anchor)
}

function headOf(last: { seq: number; mac: Buffer | null } | undefined, anchor: ChainLink): ChainLink {
  return last?.mac ? { seq: Number(last.seq), mac: last.mac } : anchor
}

function writeCheckpoint(trx: Tx, key: AuditMacKey, link: ChainLink, anchor: ChainLink): Promise<void> {
  return saveChainCheckpoint(trx, {
    checkpoint_seq: link.seq,
    checkpoint_mac: link.mac,
    anchor_seq: anchor.seq,
    anchor_mac: anchor.seq > 0 ? anchor.mac : null,
    checkpoint_tag: checkpointMac(key, link.seq, link.mac, anchor)
  })
}

/**
 * The vault's chain, continuing from the last committed entry (after a
 * restart or a crash alike). A vault made before the chain existed gets its
 * audit keys here, at its first opening, and its entries are chained as they
 * stand then: from that moment on, any change to them shows.
 */
export async function openAuditChain(writer: Writer, keyring: Keyring, { shared = false } = {}): Promise<AuditChain> {
  if (!keyring.hasAuditKeys) await inTransaction(writer, (trx) => upgrade(trx, keyring))
  return new AuditChain(keyring.auditKeys.mac, await committedHead(writer, await chainAnchor(writer)), shared)
}

async function upgrade(trx: Tx, keyring: Keyring): Promise<void> {
  // Take the write lock first, so two processes opening the vault at once upgrade it once.
  await lockVaultRow(trx)
  const vault = await findVault(trx)
  if (vault) keyring.loadAuditKeys(vault)
  if (keyring.hasAuditKeys) return
  // Chained entries without a key: someone removed the key to have the chain rebuilt over their edits.
  if (await hasChainedLogs(trx)) {
    throw new CannotUnlockError('the audit log is chained but the vault has lost its audit key (the database file was altered); restore it from a backup.')
  }
  await keyring.createAuditKeys(trx)
  const key = keyring.auditKeys.mac
  let link = GENESIS
  for (;;) {
    const rows = await listChainedLogs(trx, link.seq, PAGE)
    if (rows.length === 0) break
    const macs = rows.map((row) => {
      link = { seq: Number(row.seq), mac: entryMac(key, link.mac, row) }
      return link
    })
    await setLogMacs(trx, macs)
  }
  await writeCheckpoint(trx, key, link, GENESIS)
}

/** What `verifyAuditChain` found. */
export type ChainReport =
  | { intact: true; entries: number; head: ChainLink; anchor: ChainLink }
  | { intact: false; entries: number; seq: number; problem: string }

/**
 * Checks every entry's MAC against its content and its predecessor (the first
 * one against the anchor), and the checkpoint; reports the first broken link.
 * Safe while the service writes: entries committed meanwhile only extend the
 * chain, and an archive pruning meanwhile moves the anchor, so a gap at the
 * start is checked again from the new anchor.
 */
export async function verifyAuditChain(db: Reader, key: AuditMacKey): Promise<ChainReport> {
  for (let attempt = 1; ; attempt++) {
    const checkpoint = await findChainCheckpoint(db)
    const report = await verifyFrom(db, key, checkpoint)
    if (report.intact || attempt === 3) return report
    const now = await findChainCheckpoint(db)
    if (Number(now?.anchor_seq ?? 0) === Number(checkpoint?.anchor_seq ?? 0)) return report
  }
}

async function verifyFrom(db: Reader, key: AuditMacKey, checkpoint: ChainCheckpoint | undefined): Promise<ChainReport> {
  const anchor = anchorOf(checkpoint)
  let previous = anchor
  // From the lowest possible seq: a row slipped in below the first entry must not escape the check.
  let after = Number.MIN_SAFE_INTEGER
  let entries = 0
  let suspect: ChainedLogRow | undefined
  const broken = (seq: number, problem: string): ChainReport => ({ intact: false, entries, seq, problem })
  for (;;) {
    const rows = await listChainedLogs(db, after, PAGE)
    if (rows.length === 0) break
    for (const row of rows) {
      const seq = Number(row.seq)
      after = seq
      if (suspect) {
        // The entry after a bad one tells whether the bad one's MAC is still the one the vault wrote.
        const macIntact = row.mac !== null && entryMac(key, suspect.mac!, row).equals(row.mac)
        return broken(Number(suspect.seq), macIntact ? 'its content was changed (it no longer matches its MAC)' : 'it was replaced or inserted (its MAC is not one the vault wrote)')
      }
      if (row.mac === null) return broken(seq, 'it has no MAC (it was written outside Tessera)')
      if (seq < 1) return broken(seq, 'it was inserted before the first entry')
      if (seq <= anchor.seq) return broken(seq, `it is in the archived range (seq 1–${anchor.seq}), whose entries were pruned: it was put back or inserted`)
      if (!entryMac(key, previous.mac, row).equals(row.mac)) {
        const expected = previous.seq + 1
        if (seq !== expected) return broken(seq, `the entries before it (seq ${expected}–${seq - 1}) are missing`)
        // Keep reading for the entry after it.
        suspect = row
        continue
      }
      previous = { seq, mac: row.mac }
      entries++
      if (checkpoint && seq === Number(checkpoint.checkpoint_seq) && !row.mac.equals(checkpoint.checkpoint_mac)) {
        return broken(seq, 'it is not the entry the chain checkpoint recorded')
      }
    }
  }
  if (suspect) return broken(Number(suspect.seq), 'its content was changed or it was replaced')
  if (!checkpoint) return broken(previous.seq, 'the chain checkpoint is missing (deleted)')
  const checkpointSeq = Number(checkpoint.checkpoint_seq)
  if (!checkpointIntact(key, checkpoint)) return broken(checkpointSeq, 'the chain checkpoint or its anchor was altered')
  if (checkpointSeq > previous.seq) {
    return broken(previous.seq + 1, `the newest entries are missing: the chain ends at seq ${previous.seq}, its checkpoint recorded seq ${checkpointSeq}`)
  }
  return { intact: true, entries, head: previous, anchor }
}
