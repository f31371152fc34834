/**
 * The `tessera` command's exit codes: one table, shown by `tessera --help`
 * and documented in docs/cli.md. Scripts rely on them; never renumber.
 */
export const EXIT_CODES = {
  OK: { code: 0, meaning: 'success (`status`: a server is running)' },
  UNEXPECTED: { code: 1, meaning: 'unexpected error' },
  USAGE: { code: 2, meaning: 'bad command, option or environment variable' },
  NOT_INITIALISED: { code: 3, meaning: 'no vault in the data directory (or the team vault\'s database), or it cannot be unlocked (master key missing or wrong)' },
  ALREADY_INITIALISED: { code: 4, meaning: 'a vault already exists in the data directory or the team vault\'s database (`init`)' },
  IN_USE: { code: 5, meaning: 'the vault is in use by another running Tessera process, or instances of an older version still use the team database this one would migrate' },
  ADDRESS_IN_USE: { code: 6, meaning: 'the host and port to listen on are taken' },
  PERMISSION_DENIED: { code: 7, meaning: 'permission denied (a privileged port, a file or directory Tessera may not read or write, a team database user without a privilege Tessera needs, a process owned by another user)' },
  DATA_DIR: { code: 8, meaning: 'the data directory is missing, not a directory, or not private (owned by another user, or writable by others)' },
  NOT_RUNNING: { code: 9, meaning: 'no Tessera server is running on the data directory (`status`, `stop`)' },
  STOP_TIMEOUT: { code: 10, meaning: 'the server did not stop within the timeout (`stop`)' },
  REFUSED: { code: 11, meaning: 'the vault refused the operation (`keys retire`: the version still seals data)' },
  AUDIT_BROKEN: { code: 12, meaning: 'the audit log, or an export of it, does not verify (`logs verify`, `logs export`, `logs archive`)' },
  UNPROTECTED: { code: 13, meaning: '`serve`: refused to listen on a non-loopback address without TLS or a trusted proxy, or without allowed hosts' },
  REPORT_NOT_WRITTEN: { code: 14, meaning: '`keys retire`: the version was retired, but its report could not be written (it is printed on stdout instead)' },
  DATABASE_UNREACHABLE: { code: 15, meaning: 'the team vault\'s PostgreSQL database cannot be reached, does not exist, refuses the login, is read-only or has no schema to write in, or its TLS is missing or not trusted (`--database-url`)' },
  NEWER_VERSION: { code: 16, meaning: 'a newer version of Tessera has the database: it migrated it, or (`serve`, team vault) it asked this instance to step aside while it does' }
} as const

export type ExitName = keyof typeof EXIT_CODES
export type ExitCode = (typeof EXIT_CODES)[ExitName]['code']

/** The code of `name`. */
export function exitCode(name: ExitName): ExitCode {
  return EXIT_CODES[name].code
}

/** A failure whose message and hint are meant for the user, with the exit code it ends the command with. */
export class CliError extends Error {
  constructor(
    readonly exit: ExitName,
    message: string,
    /** What to do about it. */
    readonly hint?: string,
    /** Print the command's usage after the message (bad command line). */
    readonly showUsage = false
  ) {
    super(message)
    this.name = 'CliError'
  }
}
