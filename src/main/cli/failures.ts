/**
 * Turns whatever a command throws into a CliError: a one-line cause, the fix
 * and an exit code. Raw error messages are never printed (a database error's
 * message can quote stored values); only names and codes are.
 */
import { AppError, CannotUnlockError, VaultAlreadyInitialisedError } from '../app'
import { VaultInUseError } from '../infra/vault-lock'
import { CliError } from './exit-codes'
import { shownPath, unresolvablePath } from './path-problems'

function inUseHint({ dataDir, owner }: VaultInUseError): string {
  const stop = `\`tessera stop --data-dir ${dataDir}\``
  switch (owner?.kind) {
    case 'desktop':
      return `quit the desktop app, or run ${stop}.`
    case 'serve':
      return `use that server, or stop it with ${stop}.`
    case 'init':
      return 'wait until it has created the vault.'
    default:
      return `\`tessera status --data-dir ${dataDir}\` shows it once it has started; ${stop} stops it.`
  }
}

const PERMISSION_HINT = 'the user running Tessera must be able to read and write the data directory and its files: run as their owner, or fix the owner or mode.'

function systemError(error: NodeJS.ErrnoException): CliError | undefined {
  const where = error.path ? ` on ${error.path}` : ''
  switch (error.code) {
    case 'EACCES':
    case 'EPERM':
    case 'SQLITE_CANTOPEN':
    case 'SQLITE_READONLY':
      return new CliError('PERMISSION_DENIED', `Permission denied${where}.`, PERMISSION_HINT)
    case 'EROFS':
      return new CliError('PERMISSION_DENIED', `The data directory is on a read-only file system${where}.`, 'use a data directory on a writable file system.')
    case 'ENAMETOOLONG':
    case 'ELOOP':
    case 'ENOTDIR':
      // The commands check the paths their options name first, naming the option; this is the rest.
      return new CliError(
        'USAGE',
        `Cannot use the path${error.path ? ` ${shownPath(error.path)}` : ''}: ${unresolvablePath(error)!.why}.`,
        'check the paths given in the options and environment variables (--data-dir, --out, --file, --report…): a file or folder name holds at most 255 bytes.'
      )
    case 'ENOSPC':
      return new CliError('UNEXPECTED', `No space left on the device${where}.`, 'free some space on the disk of the data directory, then try again.')
    case 'SQLITE_NOTADB':
    case 'SQLITE_CORRUPT':
      return new CliError('UNEXPECTED', 'The vault database is damaged or is not a Tessera database.', 'restore tessera.db from a backup, or point --data-dir at the right directory.')
    default:
      return undefined
  }
}

const DATABASE_HINT = 'check --database-url (or TESSERA_DATABASE_URL): its host, port, user, password and database name, and that the PostgreSQL server runs.'

const TLS_OFF_HINT =
  'turn TLS on in the PostgreSQL server (`ssl = on` in postgresql.conf, with its certificate and key), or drop sslmode from --database-url (or TESSERA_DATABASE_URL) where the connection stays on the machine or a private network.'

const CERTIFICATE_HINT =
  "name the certificate of the authority that signed the server's certificate with sslrootcert=FILE in --database-url (or TESSERA_DATABASE_URL), and connect by a host name the certificate is for."

/** Node's codes for a server certificate that TLS verification refused (OpenSSL's names, and Node's host name check). */
const REFUSED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'INVALID_CA',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID'
])

/** node-postgres's own errors that carry no code, by their fixed messages (no value of ours is in them). */
const DRIVER_FAILURES: Record<string, [why: string, hint?: string]> = {
  'The server does not support SSL connections': ['the server does not accept TLS, which the URL asks for (sslmode)', TLS_OFF_HINT],
  'There was an error establishing an SSL connection': ['the server did not answer the request for TLS as PostgreSQL does'],
  'Connection terminated unexpectedly': ['the server closed the connection before it was ready (is a PostgreSQL server listening on that port?)']
}

/** A team vault's PostgreSQL server that cannot be reached or refuses us; messages never quote the URL (it may hold a password). */
function databaseError(error: NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string }): CliError | undefined {
  const cannot = (why: string, hint = DATABASE_HINT) => new CliError('DATABASE_UNREACHABLE', `Cannot reach the team database: ${why}.`, hint)
  if (typeof error.code === 'string' && REFUSED_CERTIFICATE.has(error.code)) return cannot(`the server's TLS certificate was not accepted (${error.code})`, CERTIFICATE_HINT)
  const driverFailure = error.code === undefined && Object.hasOwn(DRIVER_FAILURES, error.message) ? DRIVER_FAILURES[error.message] : undefined
  if (driverFailure) return cannot(...driverFailure)
  switch (error.code) {
    case 'ECONNREFUSED':
      return cannot(`the connection${error.address ? ` to ${error.address}:${error.port}` : ''} was refused`)
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return cannot(`the host name${error.hostname ? ` ${error.hostname}` : ''} does not resolve`)
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      return cannot('the server did not answer')
    case 'ENOENT':
      // A host that is a folder: the server's Unix socket in it (host=/var/run/postgresql).
      if (error.syscall !== 'connect') return undefined
      return cannot(`there is no PostgreSQL socket${error.address ? ` at ${error.address}` : ''}`, "check the host of --database-url (or TESSERA_DATABASE_URL): a folder names the server's Unix socket folder, such as /var/run/postgresql.")
    case '22023':
    case '42704':
      return new CliError(
        'USAGE',
        `The team database refused a setting of the connection (${error.code === '22023' ? 'a value it does not accept' : 'a setting it does not know'}).`,
        'check the options parameter of --database-url (or TESSERA_DATABASE_URL), such as options=-c%20statement_timeout%3D5000: each -c NAME=VALUE must be a PostgreSQL setting and a value it takes.'
      )
    case '3D000':
      return cannot('the database does not exist', 'create it (`createdb NAME`), or check the database name in --database-url (or TESSERA_DATABASE_URL).')
    case '28P01':
    case '28000':
      return cannot('the server refused the login (wrong user or password, or the user may not connect)')
    case '25006':
      return new CliError('DATABASE_UNREACHABLE', 'The team database is read-only (a standby server, or default_transaction_read_only is on).', 'point --database-url (or TESSERA_DATABASE_URL) at the primary server, where Tessera can write.')
    case '3F000':
      return new CliError(
        'DATABASE_UNREACHABLE',
        "The team database has no schema to create Tessera's tables in: its search_path names none that exists.",
        'create the schema (`CREATE SCHEMA tessera AUTHORIZATION tessera`), or name one that exists in the search_path of --database-url (or TESSERA_DATABASE_URL).'
      )
    case '42501':
      return new CliError(
        'PERMISSION_DENIED',
        'The team database refused an operation: its user lacks a privilege Tessera needs.',
        "make the user of --database-url (or TESSERA_DATABASE_URL) its database's owner (`CREATE DATABASE tessera OWNER tessera`), or grant it CREATE on the schema and every privilege on Tessera's tables."
      )
    case '53300':
      return cannot('the server has no connection left for this user or database (max_connections)', 'raise max_connections on the PostgreSQL server, or lower the number of instances or commands connected at once.')
    case '57P03':
      return cannot('the server is starting up or shutting down', 'try again once it has started.')
    default:
      return undefined
  }
}

/** A database whose schema is not this version's: another version of Tessera's, or another application's (storage/database.ts); the messages are Tessera's own. */
function schemaError(error: NodeJS.ErrnoException): CliError | undefined {
  switch (error.code) {
    case 'OLDER_INSTANCES_CONNECTED':
      return new CliError(
        'IN_USE',
        error.message,
        'stop what still runs the older version (its `tessera` commands, and instances of versions that do not step aside when asked), then start this one again: `serve` asks older instances to step aside and migrates the database as it starts.'
      )
    case 'FOREIGN_DATABASE':
      return new CliError('USAGE', error.message, 'create a database for Tessera (`CREATE DATABASE tessera OWNER tessera`) and name it in --database-url (or TESSERA_DATABASE_URL).')
    case 'NEWER_SCHEMA':
      return new CliError('NEWER_VERSION', error.message, 'install that version of Tessera (or a later one) here and run it instead; a database is never migrated back.')
    default:
      return undefined
  }
}

/** What to tell the user about `error`. */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error
  if (error instanceof VaultAlreadyInitialisedError) {
    const hint = error.teamVault ? 'serve it with `tessera serve --database-url …`, or name another database.' : `choose another --data-dir, or serve this vault with \`tessera serve --data-dir ${error.dataDir}\`.`
    return new CliError('ALREADY_INITIALISED', error.message, hint)
  }
  if (error instanceof VaultInUseError) return new CliError('IN_USE', error.message, inUseHint(error))
  if (error instanceof CannotUnlockError) return new CliError('NOT_INITIALISED', error.message, error.hint)
  // The services' expected failures carry messages written to be shown.
  if (error instanceof AppError && error.status < 500) return new CliError('REFUSED', error.message)
  const known = systemError(error as NodeJS.ErrnoException) ?? databaseError(error as NodeJS.ErrnoException) ?? schemaError(error as NodeJS.ErrnoException)
  if (known) return known
  const { name, code } = error as { name?: unknown; code?: unknown }
  const label = [typeof name === 'string' ? name : 'Error', typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : undefined].filter(Boolean).join(' ')
  return new CliError('UNEXPECTED', `Unexpected error (${label}).`, 'this is likely a bug in Tessera: report it with the command you ran and this message.')
}
