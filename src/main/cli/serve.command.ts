/**
 * `tessera serve`: serves the REST interface until SIGTERM or SIGINT (or,
 * when started through npm, until that npm process goes away).
 */
import { createLogger, type Logger } from '../infra/logger'
import { ListenError } from '../infra/listen'
import { ExposureRefusedError } from '../bootstrap/exposure'
import { startServiceHost, type ServiceHost } from '../bootstrap/service-host'
import type { CommandInput } from './commands'
import { requireDataDir } from './data-dir'
import { mailConfig } from './environment'
import { CliError, exitCode } from './exit-codes'
import { npmAncestor, startedThroughNpm, watchProcess } from './parent-watch'
import { readTlsFiles } from './tls-files'
import { placeOf, requireMasterKey, requireVault } from './vault-access'

/** A listen failure in the user's terms: which address, and what to change. */
function listenFailure(error: ListenError, input: CommandInput): CliError {
  const { address } = error
  // As the user typed it: a name is resolved before it is bound.
  const host = `${input.sourceOf('host')} ${input.options.host as string}`
  switch (error.code) {
    case 'EADDRINUSE':
      return new CliError(
        'ADDRESS_IN_USE',
        `Cannot listen on ${address}: the address is already in use.`,
        'pass another --port (0 picks a free one), or stop what listens there; if it is another Tessera, `tessera status --data-dir <its data directory>` shows it and `tessera stop` stops it.'
      )
    case 'EACCES':
      return new CliError('PERMISSION_DENIED', `Not allowed to listen on ${address}.`, 'ports below 1024 need privileges: use a port from 1024 up with --port (the default is 4390).')
    case 'EADDRNOTAVAIL':
      return new CliError('USAGE', `${host} is not an address of this machine.`, 'listen on 127.0.0.1 (the default) or on an address this machine has.')
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new CliError('USAGE', `${host} does not resolve to an address.`, 'use an IP address or a host name this machine can resolve.')
    default:
      return new CliError('UNEXPECTED', `Cannot listen on ${address} (${error.code ?? 'unknown error'}).`)
  }
}

/** Why a non-loopback address is refused, and the options that would make it safe. */
function exposureFailure({ gaps }: ExposureRefusedError, input: CommandInput): CliError {
  const needs = gaps.map((gap) => (gap === 'transport' ? 'TLS (--tls-cert and --tls-key) or a trusted reverse proxy (--trust-proxy)' : 'a Host allow-list (--allowed-hosts)'))
  const fixes = gaps.map((gap) =>
    gap === 'transport'
      ? 'pass --tls-cert FILE --tls-key FILE, or put Tessera behind a TLS-terminating reverse proxy and name it with --trust-proxy ADDR'
      : 'name the host names clients use with --allowed-hosts (such as vault.example.com)'
  )
  return new CliError(
    'UNPROTECTED',
    `${input.sourceOf('host')} ${input.options.host as string} is not a loopback address: serving there needs ${needs.join(', and ')}.`,
    `${fixes.join('; and ')}. Or listen on 127.0.0.1 (the default). See docs/cli.md, "Serving beyond loopback".`
  )
}

/** Stops serving: lets requests in flight finish, closes the vault, then exits with `code`; false if already stopping. */
type Shutdown = (reason: string, code?: number) => boolean

/**
 * Shuts down gracefully on SIGTERM, SIGINT and, under npm, when npm exits;
 * then exits 0. Signals while shutting down are ignored (`kill -9` forces it).
 */
function stopOnRequest(host: ServiceHost, logger: Logger): Shutdown {
  let stopping = false
  const shutdown: Shutdown = (reason, code = 0) => {
    if (stopping) return false
    stopping = true
    logger.info({ reason }, 'shutting down')
    host.stop().then(
      () => process.exit(code),
      (error: Error) => {
        process.stderr.write(`tessera serve: the vault did not close cleanly (${error.name}).\n`)
        process.exit(1)
      }
    )
    return true
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
  if (startedThroughNpm(process.env)) watchProcess(npmAncestor(), () => shutdown('npm exited'))
  return shutdown
}

/** A newer version is about to migrate the team vault's database: this instance stops serving, as on SIGTERM, and exits 16. */
function stepAside(shutdown: Shutdown, level: string): void {
  // The upgrading instance asks again until this one has gone: say it once.
  if (!shutdown(`a newer version (schema ${level}) is upgrading the database`, exitCode('NEWER_VERSION'))) return
  process.stderr.write(`tessera serve: a newer version of Tessera (schema ${level}) is upgrading the team database, so this instance stops serving. Start it again on the new version.\n`)
}

export async function serve(input: CommandInput): Promise<void> {
  const { options, env } = input
  const tls = await readTlsFiles(input)
  const place = placeOf(options)
  const dataDir = place.dataDir
  await requireDataDir(dataDir, 'write')
  await requireVault(place)
  const masterKey = await requireMasterKey(dataDir)
  const logger = createLogger({ level: env.TESSERA_LOG_LEVEL ?? 'info' })
  // Until the handlers are set, a request to step aside goes unheeded: the upgrading instance repeats it.
  const handlers: { shutdown?: Shutdown } = {}
  const host = await startServiceHost({
    ...place,
    masterKey,
    host: options.host as string,
    port: options.port as number,
    tls,
    logger,
    allowedHosts: options['allowed-hosts'] as string[] | undefined,
    trustedProxies: options['trust-proxy'] as string[] | undefined,
    corsOrigins: env.TESSERA_CORS_ORIGINS,
    bodyLimitBytes: env.TESSERA_BODY_LIMIT,
    mail: mailConfig(env),
    sessionMaxTtlMs: env.TESSERA_SESSION_MAX_TTL,
    cvcRetentionMs: env.TESSERA_CVC_RETENTION,
    auditRetentionDays: env.TESSERA_AUDIT_RETENTION_DAYS ?? 0,
    webhooks: { allowedHosts: options['webhook-allowed-hosts'] as string[] | undefined, retryBaseMs: env.TESSERA_WEBHOOK_RETRY_BASE_MS },
    olderInstancesWaitMs: options['upgrade-wait'] as number,
    onNewerVersion: (level) => handlers.shutdown && stepAside(handlers.shutdown, level)
  }).catch((error) => {
    if (error instanceof ListenError) throw listenFailure(error, input)
    throw error instanceof ExposureRefusedError ? exposureFailure(error, input) : error
  })
  // Handlers first: whoever reads the line may signal at once.
  handlers.shutdown = stopOnRequest(host, logger)
  process.stdout.write(`Tessera listening on ${host.url}\n`)
}
