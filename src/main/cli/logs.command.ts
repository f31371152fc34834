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
import { BrokenChainError } from '../app/audit-export'
import { verifyAuditExportLines } from '../bootstrap/offline-vault'
import type { CommandInput } from './commands'
import { CliError, exitCode, type ExitCode } from './exit-codes'
import { withUnlockedVault } from './vault-access'

function print(text: string): void {
  process.stdout.write(text + '\n')
}

export async function verify({ options }: CommandInput): Promise<ExitCode> {
  const file = options.file as string | undefined
  return file === undefined ? verifyVault(options['data-dir'] as string) : verifyFile(file, options['public-key'] as Buffer | undefined)
}

function verifyVault(dataDir: string): Promise<ExitCode> {
  return withUnlockedVault(dataDir, async (vault) => {
    const { report, signingKey } = await vault.verifyAuditLog()
    if (!report.intact) {
      print(`Audit log BROKEN at seq ${report.seq}: ${report.problem}.`)
      print(`${report.entries} entries before it verified.`)
      return exitCode('AUDIT_BROKEN')
    }
    print(`Audit log intact: ${report.entries} entries, chain head at seq ${report.head.seq}.`)
    print(`Export signing key: ${signingKey.fingerprint} (public key ${signingKey.publicKey})`)
    return exitCode('OK')
  })
}

async function verifyFile(file: string, pinned: Buffer | undefined): Promise<ExitCode> {
  const input = createReadStream(file, 'utf8')
  const opened = new Promise<void>((resolve, reject) => input.once('open', () => resolve()).once('error', reject))
  await opened.catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new CliError('USAGE', `The export ${file} does not exist.`, 'check the path given to --file.') : error
  })
  const report = await verifyAuditExportLines(() => createInterface({ input, crlfDelay: Infinity }), pinned).finally(() => input.destroy())
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
  return withUnlockedVault(options['data-dir'] as string, async (vault) => {
    const handle = await open(out, 'w', 0o600).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new CliError('USAGE', `Cannot write ${out}: its folder does not exist.`, 'choose a file in an existing folder for --out.') : error
    })
    const file = handle.createWriteStream()
    try {
      const summary = await vault.exportAuditLog(file, { ...range, now: Date.now() })
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
