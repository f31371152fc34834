/**
 * `tessera logs verify|export`: the audit trail's checks.
 *   verify [--data-dir DIR]                     the vault's whole chain
 *   verify --file FILE [--public-key KEY]       an export, offline (no vault, no key)
 *   export --out FILE [--data-dir DIR] [--since DATE] [--until DATE]
 * Exit codes: 0 intact (or exported), 1 usage or I/O error, 3 (EXIT_BROKEN)
 * when the chain or the export does not verify. Reads only the audit log;
 * safe while `tessera serve` runs on the same data dir.
 */
import { createReadStream, existsSync } from 'node:fs'
import { open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { finished } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { keyFingerprint, signingKeys } from '../crypto/audit'
import { CannotUnlockError, loadMasterKey } from '../crypto/keys'
import { readySodium } from '../crypto/sodium'
import { openDatabase, type Database } from '../db/database'
import { resolveDataDir } from '../paths'
import { openAuditChain, verifyAuditChain } from '../services/audit-chain'
import { BrokenChainError, verifyAuditExport, writeAuditExport } from '../services/audit-export'
import { unlockKeyring, type Keyring } from '../services/keyring'
import { DATABASE_FILE } from '../services/vault'

/** The chain or the export does not verify. */
export const EXIT_BROKEN = 3

const USAGE = `Usage: tessera logs <verify|export> [options]

  verify [--data-dir DIR]                  Check the vault's whole audit chain
  verify --file FILE [--public-key KEY]    Check an export offline; KEY (base64) pins the signing key
  export --out FILE [--data-dir DIR] [--since DATE] [--until DATE]
                                           Write the entries (JSON Lines) with a signed head;
                                           DATE is ISO 8601, --since inclusive, --until exclusive

Exit codes: 0 intact, 1 usage or I/O error, ${EXIT_BROKEN} the chain or the export is broken.`

function fail(message: string): number {
  process.stderr.write(`tessera logs: ${message}\n`)
  return 1
}

function print(text: string): void {
  process.stdout.write(text + '\n')
}

/** Opens the data dir's database and keys without taking the vault's lock (a running service keeps it). */
async function withVault<T>(dataDirOption: string | undefined, work: (db: Database, keyring: Keyring) => Promise<T>): Promise<T> {
  const dataDir = resolveDataDir(dataDirOption)
  const masterKey = await loadMasterKey(dataDir)
  if (!masterKey) throw new CannotUnlockError(`no master key: set TESSERA_MASTER_KEY or run \`tessera init --data-dir ${dataDir}\`.`)
  await readySodium()
  const file = join(dataDir, DATABASE_FILE)
  if (!existsSync(file)) throw new CannotUnlockError(`no vault in ${dataDir} (run \`tessera init\` first).`)
  const db = await openDatabase(file, { readers: 1 })
  try {
    const keyring = await unlockKeyring(db.reader, masterKey)
    // A vault made before the audit chain gets its keys, and its entries are chained, here as at any first opening.
    await openAuditChain(db.writer, keyring)
    return await work(db, keyring)
  } finally {
    await db.close()
  }
}

async function verifyVault(dataDir: string | undefined): Promise<number> {
  return withVault(dataDir, async (db, keyring) => {
    const report = await verifyAuditChain(db.reader, keyring.auditKeys.mac)
    const { publicKey } = signingKeys(keyring.auditKeys.signingSeed)
    if (!report.intact) {
      print(`Audit log BROKEN at seq ${report.seq}: ${report.problem}.`)
      print(`${report.entries} entries before it verified.`)
      return EXIT_BROKEN
    }
    print(`Audit log intact: ${report.entries} entries, chain head at seq ${report.head.seq}.`)
    print(`Export signing key: ${keyFingerprint(publicKey)} (public key ${publicKey.toString('base64')})`)
    return 0
  })
}

function decodePublicKey(value: string): Buffer | undefined {
  const key = Buffer.from(value.trim(), 'base64')
  return key.length === 32 ? key : undefined
}

async function verifyFile(file: string, publicKey: string | undefined): Promise<number> {
  const pinned = publicKey === undefined ? undefined : decodePublicKey(publicKey)
  if (publicKey !== undefined && !pinned) return fail('--public-key must be the base64 encoding of a 32-byte Ed25519 public key.')
  if (!existsSync(file)) return fail(`${file} does not exist.`)
  await readySodium()
  const input = createReadStream(file, 'utf8')
  const report = await verifyAuditExport(createInterface({ input, crlfDelay: Infinity }), pinned)
  input.destroy()
  if (!report.intact) {
    print(`Export BROKEN at line ${report.line}${report.seq === undefined ? '' : ` (seq ${report.seq})`}: ${report.problem}.`)
    return EXIT_BROKEN
  }
  const range = report.entries ? `, seq ${report.firstSeq} to ${report.lastSeq}` : ''
  print(`Export intact: ${report.entries} entries${range}, exported ${report.exportedAt}.`)
  print(`Signed by key ${report.fingerprint}${pinned ? ' (the pinned key)' : ''}.`)
  if (!pinned) print(`Compare the fingerprint with the vault's (\`tessera logs verify\`), then pin it: --public-key ${report.publicKey}`)
  return 0
}

function parseDate(value: string | undefined, option: string): number | undefined | Error {
  if (value === undefined) return undefined
  const ms = Date.parse(value)
  return /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(ms) ? ms : new Error(`${option} must be an ISO 8601 date, such as 2026-11-01 or 2026-11-01T12:00:00Z.`)
}

async function exportLogs(values: { out?: string; 'data-dir'?: string; since?: string; until?: string }): Promise<number> {
  if (!values.out) return fail('export needs --out FILE.')
  const since = parseDate(values.since, '--since')
  const until = parseDate(values.until, '--until')
  for (const date of [since, until]) if (date instanceof Error) return fail(date.message)
  const out = values.out
  return withVault(values['data-dir'], async (db, keyring) => {
    const handle = await open(out, 'w', 0o600).catch((error: NodeJS.ErrnoException) => error)
    if (handle instanceof Error) return fail(`cannot write ${out} (${handle.code}).`)
    const file = handle.createWriteStream()
    try {
      const range = { since: since as number | undefined, until: until as number | undefined }
      const summary = await writeAuditExport(db.reader, keyring.auditKeys, file, { ...range, now: Date.now() })
      file.end()
      await finished(file)
      const seqs = summary.entries ? `, seq ${summary.firstSeq} to ${summary.lastSeq}` : ''
      print(`Exported ${summary.entries} entries${seqs} to ${out}, signed by key ${summary.fingerprint}.`)
      return 0
    } catch (error) {
      file.destroy()
      await rm(out, { force: true })
      if (!(error instanceof BrokenChainError)) throw error
      print(`Not exported: ${error.message}`)
      return EXIT_BROKEN
    }
  })
}

export async function logs(argv: string[]): Promise<number> {
  const [action, ...rest] = argv
  if (action === '--help' || action === '-h' || action === 'help') {
    print(USAGE)
    return 0
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      'data-dir': { type: 'string' },
      file: { type: 'string' },
      'public-key': { type: 'string' },
      out: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help) {
    print(USAGE)
    return 0
  }
  if (action === 'verify') return values.file === undefined ? verifyVault(values['data-dir']) : verifyFile(values.file, values['public-key'])
  if (action === 'export') return exportLogs(values)
  return fail(`${action === undefined ? 'a subcommand is required' : `unknown subcommand "${action}"`}.\n\n${USAGE}`)
}
