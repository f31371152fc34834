/**
 * The headless `tessera` command (DESIGN §9). Other tools drive Tessera
 * through it, so its output and exit codes are a contract:
 *   init  [--data-dir DIR] [--tenant-name NAME] [--owner-email EMAIL] [--json]
 *   serve [--data-dir DIR] [--host 127.0.0.1] [--port 4390]
 *   outbox [--data-dir DIR] [--json]
 *   logs  verify|export (see logs.command.ts)
 */
import { mkdir } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { CannotUnlockError, createMasterKeyFile, loadMasterKey } from '../crypto/keys'
import { createLogger } from '../logger'
import { resolveDataDir } from '../paths'
import { startServiceHost } from '../service-host'
import { mailConfigFromEnv, type MailConfig } from '../services/mail.service'
import { initVault, VaultAlreadyInitialisedError, vaultExists } from '../services/vault'
import { readySodium } from '../crypto/sodium'
import { logs } from './logs.command'
import { outbox } from './outbox.command'

const USAGE = `Usage: tessera <command> [options]

Commands:
  init    Create a vault, its tenant and a management application (prints its key once)
          --data-dir DIR  --tenant-name NAME  --owner-email EMAIL  --json
  serve   Serve the REST interface on loopback
          --data-dir DIR  --host 127.0.0.1  --port 4390 (0 picks a free port)
  outbox  List mail waiting in and sent from the outbox, invitation links included
          --data-dir DIR  --json
  logs    Check the audit log's chain or export it with a signature (tessera logs --help)
          verify [--data-dir DIR | --file FILE [--public-key KEY]]
          export --out FILE [--data-dir DIR] [--since DATE] [--until DATE]

Environment: TESSERA_DATA_DIR, TESSERA_MASTER_KEY (base64 of 32 bytes), TESSERA_HOST,
TESSERA_PORT, TESSERA_ALLOWED_HOSTS, TESSERA_CORS_ORIGINS, TESSERA_BODY_LIMIT, TESSERA_LOG_LEVEL,
TESSERA_SMTP_HOST, TESSERA_SMTP_PORT, TESSERA_SMTP_SECURE, TESSERA_SMTP_REQUIRE_TLS, TESSERA_SMTP_USER,
TESSERA_SMTP_PASSWORD, TESSERA_SMTP_FROM, TESSERA_PUBLIC_URL (base of links in mail; default: the service's URL)`

/** A failure with a message meant for the user and an exit code. */
class CliError extends Error {}

async function init(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      'tenant-name': { type: 'string', default: 'My tenant' },
      'owner-email': { type: 'string' },
      json: { type: 'boolean', default: false }
    }
  })
  const dataDir = resolveDataDir(values['data-dir'])
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  await readySodium()
  if (await vaultExists(dataDir)) throw new VaultAlreadyInitialisedError(dataDir)
  const masterKey = (await loadMasterKey(dataDir)) ?? (await createMasterKeyFile(dataDir))
  const result = await initVault({
    dataDir,
    masterKey,
    tenantName: values['tenant-name']!,
    ownerEmail: values['owner-email']
  })
  if (values.json) {
    process.stdout.write(JSON.stringify({ tenant_id: result.tenant_id, data_dir: dataDir, application: result.application }) + '\n')
    return
  }
  process.stdout.write(
    [
      `Vault created in ${dataDir}`,
      `Tenant: ${result.tenant_id}`,
      `Management application: ${result.application.id}`,
      `API key (shown once, store it now): ${result.application.key}`,
      ''
    ].join('\n')
  )
}

function parsePort(value: string): number {
  const port = Number(value)
  if (!/^\d+$/.test(value) || port > 65535) throw new CliError(`--port must be a number from 0 to 65535, not "${value}".`)
  return port
}

function list(value: string | undefined): string[] {
  return value ? value.split(',').map((item) => item.trim()).filter(Boolean) : []
}

function mailConfig(): MailConfig {
  try {
    return mailConfigFromEnv(process.env)
  } catch (error) {
    throw new CliError((error as Error).message)
  }
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      host: { type: 'string', default: process.env.TESSERA_HOST ?? '127.0.0.1' },
      port: { type: 'string', default: process.env.TESSERA_PORT ?? '4390' }
    }
  })
  const dataDir = resolveDataDir(values['data-dir'])
  const masterKey = await loadMasterKey(dataDir)
  if (!masterKey) throw new CannotUnlockError(`no master key: set TESSERA_MASTER_KEY or run \`tessera init --data-dir ${dataDir}\`.`)
  const mail = mailConfig()
  const logger = createLogger()
  const host = await startServiceHost({
    dataDir,
    masterKey,
    host: values.host!,
    port: parsePort(values.port!),
    logger,
    allowedHosts: list(process.env.TESSERA_ALLOWED_HOSTS),
    corsOrigins: list(process.env.TESSERA_CORS_ORIGINS),
    bodyLimitBytes: process.env.TESSERA_BODY_LIMIT ? Number(process.env.TESSERA_BODY_LIMIT) : undefined,
    mail
  })
  process.stdout.write(`Tessera listening on ${host.url}\n`)
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down')
    host.stop().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.once('SIGTERM', () => shutdown('SIGTERM'))
  process.once('SIGINT', () => shutdown('SIGINT'))
}

/** A command that returns a number exits with it (`logs verify`: 3 when the chain is broken). */
const COMMANDS: Record<string, (argv: string[]) => Promise<void | number>> = { init, serve, outbox, logs }

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(USAGE + '\n')
    return command ? 0 : 1
  }
  const run = COMMANDS[command]
  if (!run) {
    process.stderr.write(`Unknown command "${command}".\n\n${USAGE}\n`)
    return 1
  }
  try {
    return (await run(rest)) ?? 0
  } catch (error) {
    const expected = error instanceof CliError || error instanceof CannotUnlockError || error instanceof VaultAlreadyInitialisedError
    const parseError = (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    process.stderr.write(`tessera ${command}: ${expected || parseError ? (error as Error).message : 'unexpected error'}\n`)
    if (!expected && !parseError) process.stderr.write(`${(error as Error).name}\n`)
    return 1
  }
}

main(process.argv.slice(2)).then((code) => {
  // `serve` keeps running; every other command exits with its code.
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code
})
