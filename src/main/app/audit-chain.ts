/**
 * The audit log's chain (tamper evidence). The single writer stamps each new
 * entry, in commit order, with the next `seq` and a keyed BLAKE2b MAC over
 * its content and its predecessor's MAC (see crypto/audit.ts). Anyone who can
 * write the database file but lacks the key cannot edit, delete, insert or
 * reorder an entry without breaking the chain from that entry on.
 *
 * Deleting the newest entries leaves a shorter chain that is still intact, so
 * the chain's head is also recorded in `log_chain` as a MAC'd checkpoint (by
 * the `index-logs` sweep every few seconds and when the vault closes): a chain
 * that ends before its checkpoint was cut.
 */
import { inTransaction, type Db, type Reader, type Tx, type Writer } from '../storage/connections'
import { checkpointMac, entryMac, GENESIS_MAC, type AuditMacKey } from '../crypto/audit'
import { CannotUnlockError } from '../domain/errors'
import type { RowSealer } from '../storage/write-queue'
import {
  findChainCheckpoint,
  hasChainedLogs,
  lastChainedLog,
  listChainedLogs,
  saveChainCheckpoint,
  setLogMacs,
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

/** Seals log rows for the write queue: explicit, gapless `seq` and the chained MAC. */
export class AuditChain implements RowSealer<ChainLink> {
  constructor(
    private readonly key: AuditMacKey,
    public head: ChainLink
  ) {}

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

  /** Records the newest committed entry as the checkpoint; runs inside a write transaction. */
  async checkpoint(trx: Tx): Promise<void> {
    await writeCheckpoint(trx, this.key, await committedHead(trx))
  }
}

async function committedHead(db: Db): Promise<ChainLink> {
  const last = await lastChainedLog(db)
  return last?.mac ? { seq: Number(last.seq), mac: last.mac } : GENESIS
}

function writeCheckpoint(trx: Tx, key: AuditMacKey, link: ChainLink): Promise<void> {
  return saveChainCheckpoint(trx, { checkpoint_seq: link.seq, checkpoint_mac: link.mac, checkpoint_tag: checkpointMac(key, link.seq, link.mac) })
}

/**
 * The vault's chain, continuing from the last committed entry (after a
 * restart or a crash alike). A vault made before the chain existed gets its
 * audit keys here, at its first opening, and its entries are chained as they
 * stand then: from that moment on, any change to them shows.
 */
export async function openAuditChain(writer: Writer, keyring: Keyring): Promise<AuditChain> {
  if (!keyring.hasAuditKeys) await inTransaction(writer, (trx) => upgrade(trx, keyring))
  return new AuditChain(keyring.auditKeys.mac, await committedHead(writer))
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
  await writeCheckpoint(trx, key, link)
}

/** What `verifyAuditChain` found. */
export type ChainReport =
  | { intact: true; entries: number; head: ChainLink }
  | { intact: false; entries: number; seq: number; problem: string }

/**
 * Checks every entry's MAC against its content and its predecessor, and the
 * checkpoint; reports the first broken link. Safe while the service writes:
 * entries committed meanwhile only extend the chain.
 */
export async function verifyAuditChain(db: Reader, key: AuditMacKey): Promise<ChainReport> {
  const checkpoint = await findChainCheckpoint(db)
  // From the lowest possible seq: a row slipped in below the first entry must not escape the check.
  let previous = { seq: Number.MIN_SAFE_INTEGER, mac: GENESIS.mac }
  let entries = 0
  let suspect: ChainedLogRow | undefined
  const broken = (seq: number, problem: string): ChainReport => ({ intact: false, entries, seq, problem })
  for (;;) {
    const rows = await listChainedLogs(db, previous.seq, PAGE)
    if (rows.length === 0) break
    for (const row of rows) {
      const seq = Number(row.seq)
      if (suspect) {
        // The entry after a bad one tells whether the bad one's MAC is still the one the vault wrote.
        const macIntact = row.mac !== null && entryMac(key, suspect.mac!, row).equals(row.mac)
        return broken(Number(suspect.seq), macIntact ? 'its content was changed (it no longer matches its MAC)' : 'it was replaced or inserted (its MAC is not one the vault wrote)')
      }
      if (row.mac === null) return broken(seq, 'it has no MAC (it was written outside Tessera)')
      if (seq < 1) return broken(seq, 'it was inserted before the first entry')
      if (!entryMac(key, previous.mac, row).equals(row.mac)) {
        const expected = Math.max(previous.seq, 0) + 1
        if (seq !== expected) return broken(seq, `the entries before it (seq ${expected}–${seq - 1}) are missing`)
        suspect = row
        // Keep reading for the entry after it; previous.seq moves on so the page query does.
        previous = { seq, mac: previous.mac }
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
  previous.seq = Math.max(previous.seq, 0)
  if (!checkpoint) return broken(previous.seq, 'the chain checkpoint is missing (deleted)')
  const checkpointSeq = Number(checkpoint.checkpoint_seq)
  if (!checkpointMac(key, checkpointSeq, checkpoint.checkpoint_mac).equals(checkpoint.checkpoint_tag)) {
    return broken(checkpointSeq, 'the chain checkpoint was altered')
  }
  if (checkpointSeq > previous.seq) {
    return broken(previous.seq + 1, `the newest entries are missing: the chain ends at seq ${previous.seq}, its checkpoint recorded seq ${checkpointSeq}`)
  }
  return { intact: true, entries, head: previous }
}
