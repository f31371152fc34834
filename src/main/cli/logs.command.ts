/**
 * `tessera logs verify`, `logs export` and `logs archive`: the audit trail's
 * checks and upkeep (options in commands.ts). verify and export read only the
 * audit log and take no vault lock, so they run while a server runs on the
 * same data directory; archive deletes what it archived, so it needs the vault
 * to itself. A broken chain or export exits with AUDIT_BROKEN, naming the
 * first broken link.
 */
import { createReadStream } from 'node:fs'
import { lstat, realpath, rm, stat } from 'node:fs/promises'
import { dirname, resolve, sep } from 'node:path'
import { finished } from 'node:stream/promises'
import { BrokenChainError, MAX_EXPORT_LINE_CHARS } from '../app/audit-export'
import { verifyAuditExportLines } from '../bootstrap/offline-vault'
import type { CommandInput } from './commands'
import { CliError, exitCode, type ExitCode } from './exit-codes'
import { placeOf, withOpenVault, withUnlockedVault, type VaultPlace } from './vault-access'
import { VaultInUseError } from '../infra/vault-lock'
import { openNewPrivateFile, renameOrRemove, temporaryBeside } from '../infra/private-files'
import { printable } from './printable'
import { NOT_A_REGULAR_FILE, pathProblem, somethingAt } from './path-problems'

function print(text: string): void {
  process.stdout.write(text + '\n')
}

export async function verify({ options }: CommandInput): Promise<ExitCode> {
  const file = options.file as string | undefined
  return file === undefined ? verifyVault(placeOf(options)) : verifyFile(file, options['public-key'] as Buffer | undefined)
}

function verifyVault(place: VaultPlace): Promise<ExitCode> {
  return withUnlockedVault(place, async (vault) => {
    const { report, signingKey } = await vault.verifyAuditLog()
    if (!report.intact) {
      print(`Audit log BROKEN at seq ${report.seq}: ${report.problem}.`)
      print(`${report.entries} entries before it verified.`)
      return exitCode('AUDIT_BROKEN')
    }
    const archived = report.anchor.seq > 0 ? ` (seq 1 to ${report.anchor.seq} archived and pruned)` : ''
    print(`Audit log intact: ${report.entries} entries, chain head at seq ${report.head.seq}${archived}.`)
    print(`Export signing key: ${signingKey.fingerprint} (public key ${signingKey.publicKey})`)
    return exitCode('OK')
  })
}

/**
 * The lines of `input` without their line breaks (\n or \r\n). A line longer
 * than an export ever holds is cut just past that length and ends the
 * reading, so a huge file without line breaks is refused without being held in memory.
 */
async function* exportLines(input: AsyncIterable<string>): AsyncGenerator<string> {
  let pending = ''
  for await (const chunk of input) {
    pending += chunk
    let start = 0
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
      yield pending.slice(start, end).replace(/\r$/, '')
      start = end + 1
    }
    pending = pending.slice(start)
    if (pending.length > MAX_EXPORT_LINE_CHARS) {
      yield pending.slice(0, MAX_EXPORT_LINE_CHARS + 1)
      return
    }
  }
  if (pending !== '') yield pending.replace(/\r$/, '')
}

/** @throws CliError (USAGE) when `file` does not exist or is not a regular file */
async function requireExportFile(file: string): Promise<void> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' || error.code === 'ENOTDIR' ? new CliError('USAGE', `The export ${file} does not exist.`, 'check the path given to --file.') : (pathProblem(error, file, '--file') ?? error)
  })
  if (info.isDirectory()) throw new CliError('USAGE', `The export ${file} is a directory.`, 'give --file the export file itself.')
  // A named pipe would be waited on, a device such as /dev/zero read forever.
  if (!info.isFile()) throw new CliError('USAGE', `Cannot read the export ${file}: ${NOT_A_REGULAR_FILE}.`, 'give --file the export file itself, a regular file.')
}

async function verifyFile(file: string, pinned: Buffer | undefined): Promise<ExitCode> {
  await requireExportFile(file)
  const input = createReadStream(file, 'utf8')
  const report = await verifyAuditExportLines(() => exportLines(input), pinned).finally(() => input.destroy())
  if (!report.intact) {
    print(`Export BROKEN at line ${report.line}${report.seq === undefined ? '' : ` (seq ${report.seq})`}: ${report.problem}.`)
    return exitCode('AUDIT_BROKEN')
  }
  const range = report.entries ? `, seq ${report.firstSeq} to ${report.lastSeq}` : ''
  print(`Export intact: ${report.entries} entries${range}, exported ${printable(report.exportedAt)}.`)
  print(`Signed by key ${report.fingerprint}${pinned ? ' (the pinned key)' : ''}.`)
  if (!pinned) print(`Compare the fingerprint with the vault's (\`tessera logs verify\`), then pin it: --public-key ${printable(report.publicKey)}`)
  return exitCode('OK')
}

/**
 * @throws CliError (USAGE) when the folder of `file` does not exist, or is the
 * data directory or inside it (symbolic links resolved). The vault's own files
 * live there (its database and journal, key files, lock record): a file
 * written there could replace or be mistaken for one of them, and a backup of
 * the folder would carry the audit log beside the master key.
 */
async function requireOutsideDataDir(file: string, dataDir: string, what: 'export' | 'archive'): Promise<void> {
  const folder = await realpath(dirname(file)).catch(() => {
    throw new CliError('USAGE', `Cannot write ${file}: its folder does not exist.`, 'choose a file in an existing folder for --out.')
  })
  const vaultDir = await realpath(dataDir).catch((error: NodeJS.ErrnoException) => {
    // No data directory: nothing is inside it (opening the vault reports it).
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw error
  })
  if (vaultDir !== undefined && (folder === vaultDir || folder.startsWith(vaultDir + sep))) {
    throw new CliError('USAGE', `Refusing to write ${file}: it is inside the data directory ${dataDir}.`, `write the ${what} outside the data directory: it holds the vault and its master key.`)
  }
}

/**
 * Where `logs export` may write: in an existing folder outside the data directory, a new file, a regular
 * file, or a symbolic link to one (or to nothing), which the export replaces. Anything else is refused
 * rather than replaced: renamed over, a device, a pipe or a socket (`/dev/full`, run as root) would be gone.
 */
async function exportTarget(out: string, dataDir: string): Promise<string> {
  const file = resolve(out)
  await requireOutsideDataDir(file, dataDir, 'export')
  const entry = await lstat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw pathProblem(error, file, '--out') ?? error
  })
  const target = entry?.isSymbolicLink() ? await stat(file).catch(() => undefined) : entry
  if (target?.isDirectory()) throw new CliError('USAGE', `Cannot write ${file}: it is a directory.`, 'give --out a file name.')
  if (target && !target.isFile()) {
    throw new CliError('USAGE', `Cannot write ${file}: ${NOT_A_REGULAR_FILE}.`, 'give --out the name of a regular file, new or to be replaced: the export replaces it once complete.')
  }
  return file
}

/**
 * `tessera logs export`: writes a new owner-only file beside --out and renames
 * it over --out only once the export is complete, so a refused export leaves
 * the previous file as it was, and a file or symlink at --out is replaced, never written through.
 */
export async function exportLogs({ options }: CommandInput): Promise<ExitCode> {
  const out = options.out as string | undefined
  if (!out) throw new CliError('USAGE', 'Missing --out FILE.', 'see `tessera logs export --help`.', true)
  const range = { since: options.since as number | undefined, until: options.until as number | undefined }
  const place = placeOf(options)
  return withUnlockedVault(place, async (vault) => {
    const target = await exportTarget(out, place.dataDir)
    const temporary = temporaryBeside(target)
    // The temporary name is longer than --out's: a name just short enough for lstat can still be too long here.
    const handle = await openNewPrivateFile(temporary).catch((error: unknown) => {
      throw pathProblem(error, target, '--out') ?? error
    })
    const file = handle.createWriteStream()
    try {
      const summary = await vault.exportAuditLog(file, { ...range, now: Date.now() })
      file.end()
      await finished(file)
      await renameOrRemove(temporary, target)
      const seqs = summary.entries ? `, seq ${summary.firstSeq} to ${summary.lastSeq}` : ''
      print(`Exported ${summary.entries} entries${seqs} to ${out}, signed by key ${summary.fingerprint}.`)
      return exitCode('OK')
    } catch (error) {
      file.destroy()
      await rm(temporary, { force: true })
      if (!(error instanceof BrokenChainError)) throw error
      print(`Not exported: ${error.message}`)
      return exitCode('AUDIT_BROKEN')
    }
  })
}

/** Progress on stderr, at most once a second (and at the end): a long prune shows it is moving. */
function progressPrinter(): (pruned: number, total: number) => void {
  let shownAt = 0
  return (pruned, total) => {
    if (pruned < total && Date.now() - shownAt < 1000) return
    shownAt = Date.now()
    process.stderr.write(`Pruning archived entries: ${pruned} of ${total} (${Math.floor((100 * pruned) / total)}%)\n`)
  }
}

/** The checks `logs archive` makes before it opens the vault: a new file in an existing folder outside the data directory. */
async function archiveTarget(out: string | undefined, before: number | undefined, dataDir: string): Promise<string> {
  if (before === undefined) throw new CliError('USAGE', 'Missing --before DATE.', 'see `tessera logs archive --help`.', true)
  if (!out) throw new CliError('USAGE', 'Missing --out FILE.', 'see `tessera logs archive --help`.', true)
  if (before > Date.now()) throw new CliError('USAGE', `--before ${new Date(before).toISOString()} is in the future.`, 'give a date in the past: the entries created before it are archived.')
  const file = resolve(out)
  await requireOutsideDataDir(file, dataDir, 'archive')
  // A symbolic link is there even when it leads nowhere, and the archive would not be written through it.
  if (await somethingAt(file, '--out')) throw new CliError('USAGE', `${file} already exists.`, 'an archive never replaces a file (it may hold the only copy of pruned entries), nor a symbolic link, even one that leads nowhere: give --out a new file name.')
  return file
}

/** `tessera logs archive`: exports the entries created before --before to --out, verifies the file, then prunes them. */
export async function archiveLogs({ options }: CommandInput): Promise<ExitCode> {
  const before = options.before as number | undefined
  const place = placeOf(options)
  const file = await archiveTarget(options.out as string | undefined, before, place.dataDir)
  const dataDir = place.dataDir
  const opened = withOpenVault(place, async (vault) => {
    try {
      const result = await vault.services.auditArchive.archive(vault.owner, { before: before!, file, onProgress: progressPrinter() })
      if (!result) {
        print(`Nothing to archive: no entries created before ${new Date(before!).toISOString()}. No file was written.`)
        return exitCode('OK')
      }
      print(`Archived ${result.entries} entries (seq ${result.firstSeq} to ${result.lastSeq}, created before ${result.before}) to ${result.file}.`)
      print(`SHA-256 ${result.sha256}. They are pruned from the vault; the rest of the chain starts after seq ${result.lastSeq}.`)
      print(`Check the file any time with: tessera logs verify --file ${result.file}`)
      return exitCode('OK')
    } catch (error) {
      if (!(error instanceof BrokenChainError)) throw error
      print(`Not archived: ${error.message}`)
      return exitCode('AUDIT_BROKEN')
    }
  })
  return opened.catch((error) => {
    if (!(error instanceof VaultInUseError)) throw error
    throw new CliError(
      'IN_USE',
      error.message,
      `archiving deletes entries, so it needs the vault to itself: stop the server first (\`tessera stop --data-dir ${dataDir}\`), or let it archive for you (TESSERA_AUDIT_RETENTION_DAYS for \`tessera serve\`, Settings → Audit archive in the desktop app).`
    )
  })
}
