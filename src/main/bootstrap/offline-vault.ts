/**
 * A vault's database and keys opened without taking its lock (not openVault),
 * so the commands that only read (`tessera outbox`, `keys status`, `logs`) work
 * while `tessera serve` or the desktop app holds the vault.
 */
import type { Writable } from 'node:stream'
import type { OutboxMail } from '../../shared/contracts'
import type { KeyStatus } from '../../shared/types'
import { openAuditChain, verifyAuditChain, type ChainReport } from '../app/audit-chain'
import { exportSigningKey, verifyAuditExport, writeAuditExport, type ExportOptions, type ExportReport, type ExportSummary } from '../app/audit-export'
import { readKeyStatus } from '../app/keys.service'
import { unlockKeyring } from '../app/keyring'
import { readOutbox } from '../app/mail.service'
import { readySodium } from '../crypto/sodium'
import { openDatabase } from '../storage/database'
import type { MasterKey } from './master-key'
import { databaseLocation } from './vault'

/** What the read-only commands ask of a vault. */
export interface OfflineVault {
  /** The newest `limit` waiting and sent mails, links decrypted. */
  outbox(limit: number): Promise<OutboxMail[]>
  keyStatus(): Promise<KeyStatus>
  /** The audit chain checked entry by entry, and the key that signs exports of it. */
  verifyAuditLog(): Promise<{ report: ChainReport; signingKey: { fingerprint: string; publicKey: string } }>
  /** Writes a signed export of the audit log (BrokenChainError when the chain does not verify). */
  exportAuditLog(out: Writable, options: ExportOptions): Promise<ExportSummary>
}

/** Opens the vault without its lock for `work`, and closes it again. */
export async function withOfflineVault<T>(place: { dataDir: string; databaseUrl?: string }, masterKey: MasterKey, work: (vault: OfflineVault) => Promise<T>): Promise<T> {
  await readySodium()
  const db = await openDatabase(databaseLocation(place), { readers: 1 })
  try {
    const keyring = await unlockKeyring(db.reader, masterKey)
    // A vault made before the audit chain gets its keys, and its entries are chained, here as at any first opening.
    const chained = () => openAuditChain(db.writer, keyring)
    return await work({
      outbox: async (limit) => (await readOutbox(db.reader, keyring, { page: 1, size: limit })).data,
      keyStatus: () => readKeyStatus(db.reader, keyring),
      async verifyAuditLog() {
        await chained()
        return { report: await verifyAuditChain(db.reader, keyring.auditKeys.mac), signingKey: exportSigningKey(keyring.auditKeys) }
      },
      async exportAuditLog(out, options) {
        await chained()
        return writeAuditExport(db.reader, keyring.auditKeys, out, options)
      }
    })
  } finally {
    await db.close()
  }
}

/** Checks an export offline, without any vault (see verifyAuditExport); `lines` reads it once the checks are ready. */
export async function verifyAuditExportLines(lines: () => AsyncIterable<string>, pinnedKey?: Uint8Array): Promise<ExportReport> {
  await readySodium()
  return verifyAuditExport(lines(), pinnedKey)
}
