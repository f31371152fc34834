/**
 * The table of `tessera` commands and their options. `--help`, argument
 * parsing and the docs test all read it, so usage text and docs cannot drift.
 * Adding a command is one entry here plus its `<name>.command.ts` file, loaded
 * only when the command runs.
 */
import { z } from 'zod'
import { defaultDataDir } from '../infra/paths'
import { isoDateText } from '../../shared/contracts/common'
import { emailSchema, tenantNameSchema } from '../../shared/contracts/fields'
import { allowedHostsSchema, databaseUrlSchema, hostSchema, listenPortSchema, trustedProxiesSchema, upgradeWaitSchema, webhookAllowedHostsSchema, type EnvName, type Environment } from './environment'
import type { ExitCode } from './exit-codes'

export interface OptionSpec {
  /** The long name, without dashes. */
  name: string
  /** Placeholder of the value in help (`DIR`); an option without one is a switch (true when given). */
  value?: string
  description: string
  /** The variable read when the option is not given. */
  env?: EnvName
  /** The value when neither the option nor its variable is given, as it would be typed. */
  default?: string
  /** Validates and converts a value typed on the command line; its messages complete "--name …". */
  schema?: z.ZodType
  /** A value never repeated in messages (it may hold a password). */
  secret?: boolean
}

/** What a command receives, all validated. */
export interface CommandInput {
  /** Option values by long name; a switch is true or false. */
  options: Record<string, unknown>
  /** The variables the command reads. */
  env: Environment
  /** Where an option's value came from, for messages: "--port", "TESSERA_PORT" or "the default". */
  sourceOf(option: string): string
}

export interface CommandSpec {
  name: string
  /** One line for the command list. */
  summary: string
  /** More lines for the command's own help. */
  details?: string
  options: OptionSpec[]
  /** Variables the command reads besides its options' own. */
  env: EnvName[]
  /** Resolves with the exit code, or nothing for success. */
  run(input: CommandInput): Promise<ExitCode | void>
}

/**
 * A command's module, loaded when the command runs so that `--help` and
 * `status` do not load the whole vault. `require`, not `import()`: the CLI
 * runs as CommonJS under tsx, which hooks `require` only.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = (name: string): unknown => require(`./${name}.command`)

const secondsSchema = z
  .string()
  .regex(/^\d{1,4}(\.\d+)?$/, 'must be a number of seconds from 1 to 3600')
  .transform(Number)
  .refine((seconds) => seconds >= 1 && seconds <= 3600, 'must be a number of seconds from 1 to 3600')

const dataDir: OptionSpec = {
  name: 'data-dir',
  value: 'DIR',
  description: 'data directory of the vault',
  env: 'TESSERA_DATA_DIR',
  default: defaultDataDir(),
  schema: z.string().min(1, 'must not be empty')
}

const databaseUrl: OptionSpec = {
  name: 'database-url',
  value: 'URL',
  description: 'a team vault in this PostgreSQL database instead of the data directory\'s SQLite file',
  env: 'TESSERA_DATABASE_URL',
  schema: databaseUrlSchema,
  secret: true
}

const nonEmpty = z.string().min(1, 'must not be empty')

const json: OptionSpec = { name: 'json', description: 'print one JSON object instead of text' }

/** An ISO 8601 date or time, as epoch milliseconds. */
const dateSchema = isoDateText('must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC, such as 2026-11-01 or 2026-11-01T12:00:00Z')

/** A base64 Ed25519 public key (32 bytes). */
const publicKeySchema = z
  .string()
  .transform((value) => Buffer.from(value.trim(), 'base64'))
  .refine((key) => key.length === 32, 'must be the base64 encoding of a 32-byte Ed25519 public key, as `tessera logs verify` prints it')

const SMTP_AND_LINKS: EnvName[] = [
  'TESSERA_SMTP_HOST',
  'TESSERA_SMTP_PORT',
  'TESSERA_SMTP_SECURE',
  'TESSERA_SMTP_REQUIRE_TLS',
  'TESSERA_SMTP_USER',
  'TESSERA_SMTP_PASSWORD',
  'TESSERA_SMTP_FROM',
  'TESSERA_PUBLIC_URL'
]

export const COMMANDS: CommandSpec[] = [
  {
    name: 'init',
    summary: 'Create a vault, its tenant and a management application (prints its key once)',
    details: 'The management application holds every management permission. Its key is printed once: store it.',
    options: [
      dataDir, databaseUrl,
      { name: 'tenant-name', value: 'NAME', description: 'name of the tenant', default: 'My tenant', schema: tenantNameSchema },
      { name: 'owner-email', value: 'EMAIL', description: "e-mail address of the tenant's OWNER", schema: emailSchema },
      json
    ],
    env: ['TESSERA_MASTER_KEY'],
    run: (input) => (load('init') as typeof import('./init.command')).init(input)
  },
  {
    name: 'serve',
    summary: 'Serve the REST interface until SIGTERM or SIGINT',
    details:
      'Prints "Tessera listening on http://HOST:PORT" (https with TLS) once ready. SIGTERM or SIGINT stops accepting\n' +
      'connections, lets requests in flight finish, closes the vault and exits 0. Started through npm (npx, npm run),\n' +
      'it also stops when that npm process goes away. A --host that is not loopback needs TLS (--tls-cert, --tls-key)\n' +
      'or a trusted reverse proxy (--trust-proxy), and --allowed-hosts; without them serve refuses to start (exit 13).\n' +
      'On a team vault, serve migrates the database as it starts, once instances of an older version have stepped aside;\n' +
      'an instance asked to step aside by a newer version stops as on SIGTERM and exits 16.',
    options: [
      dataDir, databaseUrl,
      { name: 'host', value: 'HOST', description: 'address to listen on', env: 'TESSERA_HOST', default: '127.0.0.1', schema: hostSchema },
      { name: 'port', value: 'PORT', description: 'port to listen on (0 picks a free one)', env: 'TESSERA_PORT', default: '4390', schema: listenPortSchema },
      { name: 'allowed-hosts', value: 'HOSTS', description: 'Host header names to accept besides loopback ones, comma-separated', env: 'TESSERA_ALLOWED_HOSTS', schema: allowedHostsSchema },
      { name: 'tls-cert', value: 'FILE', description: 'serve HTTPS with this PEM certificate chain (with --tls-key)', env: 'TESSERA_TLS_CERT', schema: nonEmpty },
      { name: 'tls-key', value: 'FILE', description: 'the PEM private key of --tls-cert', env: 'TESSERA_TLS_KEY', schema: nonEmpty },
      {
        name: 'trust-proxy',
        value: 'ADDRS',
        description: 'reverse proxies (IP addresses or CIDR ranges, comma-separated) whose X-Forwarded-* headers are believed',
        env: 'TESSERA_TRUSTED_PROXIES',
        schema: trustedProxiesSchema
      },
      {
        name: 'webhook-allowed-hosts',
        value: 'HOSTS',
        description: 'where webhook deliveries may go besides loopback: host names, IP addresses or CIDR ranges, comma-separated',
        env: 'TESSERA_WEBHOOK_ALLOWED_HOSTS',
        schema: webhookAllowedHostsSchema
      },
      {
        name: 'upgrade-wait',
        value: 'SECONDS',
        description: 'team vault: how long to wait for instances of an older version to step aside before migrating the database',
        env: 'TESSERA_UPGRADE_WAIT',
        default: '60',
        schema: upgradeWaitSchema
      }
    ],
    env: ['TESSERA_MASTER_KEY', 'TESSERA_WEBHOOK_RETRY_BASE_MS', 'TESSERA_CORS_ORIGINS', 'TESSERA_BODY_LIMIT', 'TESSERA_LOG_LEVEL', 'TESSERA_SESSION_MAX_TTL', 'TESSERA_CVC_RETENTION', 'TESSERA_AUDIT_RETENTION_DAYS', ...SMTP_AND_LINKS],
    run: (input) => (load('serve') as typeof import('./serve.command')).serve(input)
  },
  {
    name: 'status',
    summary: 'Tell whether a Tessera server (serve or the desktop app) runs on the data directory',
    details: 'Prints its process id, kind and URL. Exits 0 when one runs, 9 when none does.',
    options: [dataDir, json],
    env: [],
    run: (input) => (load('status') as typeof import('./status.command')).status(input)
  },
  {
    name: 'stop',
    summary: 'Stop the Tessera server running on the data directory, gracefully',
    details: 'Sends it SIGTERM, then waits until it has finished its requests and exited.',
    options: [dataDir, { name: 'timeout', value: 'SECONDS', description: 'how long to wait for it to exit', default: '30', schema: secondsSchema }],
    env: [],
    run: (input) => (load('stop') as typeof import('./stop.command')).stop(input)
  },
  {
    name: 'outbox',
    summary: 'List mail waiting in and sent from the outbox, invitation links included',
    details: 'Reads only, so it works while a server runs on the same data directory.',
    options: [dataDir, databaseUrl, json],
    env: ['TESSERA_MASTER_KEY'],
    run: (input) => (load('outbox') as typeof import('./outbox.command')).outbox(input)
  },
  {
    name: 'logs verify',
    summary: "Check the audit log's chain, or an export of it offline",
    details:
      'Checks every entry of the vault against its MAC and its predecessor, or with --file an export against its hash chain\n' +
      'and signature (no vault or master key needed). Exits 0 when intact, 11 naming the first broken link otherwise.\n' +
      'Reads only, so it works while a server runs on the same data directory.',
    options: [
      dataDir, databaseUrl,
      { name: 'file', value: 'FILE', description: 'verify this export instead of the vault', schema: z.string().min(1, 'must not be empty') },
      { name: 'public-key', value: 'KEY', description: "the vault's export signing key (base64) the export must be signed with", schema: publicKeySchema }
    ],
    env: ['TESSERA_MASTER_KEY'],
    run: (input) => (load('logs') as typeof import('./logs.command')).verify(input)
  },
  {
    name: 'logs export',
    summary: 'Export audit log entries with a signed head, to verify offline',
    details:
      'Writes the entries from the first at or after --since to the last before --until as JSON Lines, with a hash chain\n' +
      "and a head signed by the vault's audit signing key. Refuses (exit 12) when the vault's chain does not verify.",
    options: [
      dataDir, databaseUrl,
      { name: 'out', value: 'FILE', description: 'file to write (required)', schema: z.string().min(1, 'must not be empty') },
      { name: 'since', value: 'DATE', description: 'first entry at or after this ISO 8601 date (midnight UTC) or date-time with Z or an offset', schema: dateSchema },
      { name: 'until', value: 'DATE', description: 'last entry before this ISO 8601 date (midnight UTC) or date-time with Z or an offset', schema: dateSchema }
    ],
    env: ['TESSERA_MASTER_KEY'],
    run: (input) => (load('logs') as typeof import('./logs.command')).exportLogs(input)
  },
  {
    name: 'logs archive',
    summary: 'Archive the audit entries created before a date to a signed export file, then prune them from the vault',
    details:
      'Writes the entries as `logs export` does (the file verifies with `logs verify --file`), syncs and checks the file, logs\n' +
      'the archive, then deletes the entries in short batches; the remaining chain still verifies. Never replaces a file.\n' +
      'Rerun after an interruption: it archives what is left. Needs the vault to itself: stop `tessera serve` or the desktop\n' +
      'app first, or set a retention (TESSERA_AUDIT_RETENTION_DAYS, or Settings in the desktop app) to archive on a schedule.',
    options: [
      dataDir, databaseUrl,
      { name: 'before', value: 'DATE', description: 'archive the entries created before this ISO 8601 date (midnight UTC) or date-time with Z or an offset (required, not in the future)', schema: dateSchema },
      { name: 'out', value: 'FILE', description: 'new file to write the archive to (required)', schema: z.string().min(1, 'must not be empty') }
    ],
    env: ['TESSERA_MASTER_KEY'],
    run: (input) => (load('logs') as typeof import('./logs.command')).archiveLogs(input)
  }
]

/** A whole number from 1 to `max`; messages complete "--name …". */
function countSchema(max: number) {
  const message = `must be a whole number from 1 to ${max}`
  return z.string().regex(/^\d{1,10}$/, message).transform(Number).refine((value) => value >= 1 && value <= max, message)
}

const keysCommand = () => load('keys') as typeof import('./keys.command')
const EXCLUSIVE = 'Needs the vault to itself: stop `tessera serve` or the desktop app first.'

COMMANDS.push(
  {
    name: 'keys status',
    summary: 'Show the data-key versions, what each one seals, and any rotation in progress',
    details: 'Reads only, so it works while a server runs on the same data directory.',
    options: [dataDir, databaseUrl, json],
    env: ['TESSERA_MASTER_KEY'],
    run: (input) => keysCommand().keysStatus(input)
  },
  {
    name: 'keys rotate',
    summary: 'Create a new data-key version and re-encrypt every sealed object onto it',
    details: `New writes use the new version at once. An interrupted pass resumes here or in the server that opens the vault next.\n${EXCLUSIVE}`,
    options: [dataDir, databaseUrl, { name: 'batch-size', value: 'N', description: 'objects re-encrypted per transaction', default: '500', schema: countSchema(5000) }],
    env: ['TESSERA_MASTER_KEY', 'TESSERA_CVC_RETENTION'],
    run: (input) => keysCommand().keysRotate(input)
  },
  {
    name: 'keys retire',
    summary: 'Delete an old data-key version once nothing uses it, and write a JSON report that proves it',
    details: EXCLUSIVE,
    options: [
      dataDir, databaseUrl,
      { name: 'version', value: 'N', description: 'the data-key version to retire (required)', schema: countSchema(2 ** 31 - 1) },
      { name: 'report', value: 'FILE', description: 'where to write the report (default: <data-dir>/key-retirement-v<N>-<time>.json)' },
      json
    ],
    env: ['TESSERA_MASTER_KEY', 'TESSERA_CVC_RETENTION'],
    run: (input) => keysCommand().keysRetire(input)
  },
  {
    name: 'keys rotate-master',
    summary: 'Re-wrap every key under a new master key, crash-safe',
    details: `Replaces master.key atomically; with TESSERA_MASTER_KEY, the new key goes to --new-key-file.\n${EXCLUSIVE}`,
    options: [dataDir, databaseUrl, { name: 'new-key-file', value: 'FILE', description: 'new file for the new key (only with TESSERA_MASTER_KEY)' }],
    env: ['TESSERA_MASTER_KEY', 'TESSERA_CVC_RETENTION'],
    run: (input) => keysCommand().keysRotateMaster(input)
  }
)

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((command) => command.name === name)
}

/** The commands of a group such as `keys` (named `keys status`, `keys rotate`, …). */
export function commandGroup(group: string): CommandSpec[] {
  return COMMANDS.filter((command) => command.name.startsWith(`${group} `))
}

/** The command `argv` starts with (one word, or two as in `logs verify`) and the arguments after it. */
export function commandOf(argv: readonly string[]): { command: CommandSpec; rest: string[] } | undefined {
  const [first, second, ...others] = argv
  const pair = second === undefined ? undefined : findCommand(`${first} ${second}`)
  if (pair) return { command: pair, rest: others }
  const single = findCommand(first)
  return single && { command: single, rest: argv.slice(1) }
}
