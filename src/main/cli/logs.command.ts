/**
 * `tessera logs verify` and `tessera logs export`: the audit trail's checks
 * (options in commands.ts). Both read only the audit log and take no vault
 * lock, so they run while a server runs on the same data directory. A broken
 * chain or export exits with AUDIT_BROKEN, naming the first broken link.
 */
import { createReadStream } from 'node:fs'
import { open, rm } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { finished } from 'node:stream/promises'
import { keyFingerprint, signingKeys } from '../crypto/audit'
import { readySodium } from '../crypto/sodium'
import type { Database } from '../storage/database'
import { openAuditChain, verifyAuditChain } from '../app/audit-chain'
import { BrokenChainError, verifyAuditExport, writeAuditExport } from '../app/audit-export'
import type { Keyring } from '../app/keyring'
import type { CommandInput } from './commands'
import { CliError, exitCode, type ExitCode } from './exit-codes'
import { withUnlockedDatabase } from './vault-access'

function print(text: string): void {
  process.stdout.write(text + '\n')
}

/** Opens the vault's database and keys without its lock; a vault made before the audit chain gets its keys, and its entries are chained, here as at any first opening. */
function withVault<T>(dataDir: string, work: (db: Database, keyring: Keyring) => Promise<T>): Promise<T> {
  return withUnlockedDatabase(dataDir, async (db, keyring) => {
    await openAuditChain(db.writer, keyring)
    return work(db, keyring)
  })
}

export async function verify({ options }: CommandInput): Promise<ExitCode> {
  const file = options.file as string | undefined
  return file === undefined ? verifyVault(options['data-dir'] as string) : verifyFile(file, options['public-key'] as Buffer | undefined)
}

function verifyVault(dataDir: string): Promise<ExitCode> {
  return withVault(dataDir, async (db, keyring) => {
    const report = await verifyAuditChain(db.reader, keyring.auditKeys.mac)
    if (!report.intact) {
      print(`Audit log BROKEN at seq ${report.seq}: ${report.problem}.`)
      print(`${report.entries} entries before it verified.`)
      return exitCode('AUDIT_BROKEN')
    }
    const { publicKey } = signingKeys(keyring.auditKeys.signingSeed)
    print(`Audit log intact: ${report.entries} entries, chain head at seq ${report.head.seq}.`)
    print(`Export signing key: ${keyFingerprint(publicKey)} (public key ${publicKey.toString('base64')})`)
    return exitCode('OK')
  })
}

async function verifyFile(file: string, pinned: Buffer | undefined): Promise<ExitCode> {
  await readySodium()
  const input = createReadStream(file, 'utf8')
  const opened = new Promise<void>((resolve, reject) => input.once('open', () => resolve()).once('error', reject))
  await opened.catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new CliError('USAGE', `The export ${file} does not exist.`, 'check the path given to --file.') : error
  })
  const report = await verifyAuditExport(createInterface({ input, crlfDelay: Infinity }), pinned).finally(() => input.destroy())
  if (!report.intact) {
    print(`Export BROKEN at line ${report.line}${report.seq === undefined ? '' : ` (seq ${report.seq})`}: ${report.problem}.`)
    return exitCode('AUDIT_BROKEN')
  }
  const range = report.entries ? `, seq ${report.firstSeq} to ${report.lastSeq}` : ''
  print(`Export intact: ${report.entries} entries${range}, exported ${report.exportedAt}.`)
  print(`Signed by key ${report.fingerprint}${pinned ? ' (the pinned key)' : ''}.`)
  if (!pinned) print(`Compare the fingerprint with the vault's (\`tessera logs verify\`), then pin it: --public-key ${report.publicKey}`)
  return exitCode('OK')
}

export async function exportLogs({ options }: CommandInput): Promise<ExitCode> {
  const out = options.out as string | undefined
  if (!out) throw new CliError('USAGE', 'Missing --out FILE.', 'see `tessera logs export --help`.', true)
  const range = { since: options.since as number | undefined, until: options.until as number | undefined }
  return withVault(options['data-dir'] as string, async (db, keyring) => {
    const handle = await open(out, 'w', 0o600).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new CliError('USAGE', `Cannot write ${out}: its folder does not exist.`, 'choose a file in an existing folder for --out.') : error
    })
    const file = handle.createWriteStream()
    try {
      const summary = await writeAuditExport(db.reader, keyring.auditKeys, file, { ...range, now: Date.now() })
      file.end()
      await finished(file)
      const seqs = summary.entries ? `, seq ${summary.firstSeq} to ${summary.lastSeq}` : ''
      print(`Exported ${summary.entries} entries${seqs} to ${out}, signed by key ${summary.fingerprint}.`)
      return exitCode('OK')
    } catch (error) {
      file.destroy()
      await rm(out, { force: true })
      if (!(error instanceof BrokenChainError)) throw error
      print(`Not exported: ${error.message}`)
      return exitCode('AUDIT_BROKEN')
    }
  })
}
