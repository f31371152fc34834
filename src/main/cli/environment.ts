/**
 * Every `TESSERA_*` environment variable the `tessera` command reads, in one
 * zod schema, with the text `--help` and docs/cli.md show for it. Each
 * command validates the variables it reads before it opens anything, so a bad
 * value fails at once with a message naming the variable. An empty variable
 * counts as unset.
 */
import { accessSync, constants } from 'node:fs'
import { isIP } from 'node:net'
import { z } from 'zod'
import { isMailbox } from '../../shared/contracts/fields'
import { MASTER_KEY_BYTES } from '../bootstrap/master-key'
import { parseCvcRetention } from '../app'
import { MAX_AUDIT_RETENTION_DAYS } from '../app/audit-archive'
import { isHostOrIp, parseAddressEntry } from '../infra/address-list'
import type { MailConfig } from '../infra/mail-transport'
import { CliError } from './exit-codes'

const hostname = z.hostname()

/** An IP address or a DNS name; messages complete "<variable or option> …". */
export const hostSchema = z.string().refine(isHostOrIp, 'must be an IP address or a host name, such as 127.0.0.1 or localhost')

function portSchema(min: number) {
  const message = `must be a port number from ${min} to 65535`
  return z
    .string()
    .regex(/^\d{1,5}$/, message)
    .transform(Number)
    .refine((port) => port >= min && port <= 65535, message)
}

export const listenPortSchema = portSchema(0)

const flagSchema = z
  .string()
  .regex(/^(1|true|yes|on|0|false|no|off)$/i, 'must be true or false (also 1/0, yes/no, on/off)')
  .transform((value) => /^(1|true|yes|on)$/i.test(value))

/** A comma-separated list whose every item passes `check`. */
function listSchema(check: (item: string) => boolean, message: string) {
  return z
    .string()
    .transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean))
    .refine((items) => items.every(check), message)
}

const DURATION_UNITS_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** A whole number of seconds, or of `s`, `m`, `h` or `d` (`90m`, `24h`), read as milliseconds within [minMs, maxMs]. */
function durationSchema(minMs: number, maxMs: number, message: string) {
  return z
    .string()
    .regex(/^\d{1,9}[smhd]?$/, message)
    .transform((value) => Number(value.replace(/[smhd]$/, '')) * DURATION_UNITS_MS[/[smhd]$/.exec(value)?.[0] ?? 's'])
    .refine((ms) => ms >= minMs && ms <= maxMs, message)
}

/** Whether `parse` accepts `value` (parsers that throw on bad input). */
function canParse(parse: (value: string) => unknown, value: string): boolean {
  try {
    parse(value)
    return true
  } catch {
    return false
  }
}

const isHttpUrl = (value: string) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)

const isOrigin = (value: string) => isHttpUrl(value) && new URL(value).origin === value

/** A Host header name as the host check compares it: a DNS name, an IPv4 address, or an IPv6 address in brackets. */
const isHostHeaderName = (value: string) =>
  hostname.safeParse(value).success || isIP(value) === 4 || (value.startsWith('[') && value.endsWith(']') && isIP(value.slice(1, -1)) === 6)

/** `--allowed-hosts` and `TESSERA_ALLOWED_HOSTS`: the Host names accepted besides loopback ones. */
export const allowedHostsSchema = listSchema(isHostHeaderName, 'must be host names separated by commas, such as vault.example.com,10.0.0.5')

/** `--webhook-allowed-hosts` and `TESSERA_WEBHOOK_ALLOWED_HOSTS`: where webhook deliveries may go besides loopback. */
export const webhookAllowedHostsSchema = listSchema(
  (item) => hostname.safeParse(item).success || parseAddressEntry(item.replace(/^\[(.*)\]$/, '$1')) !== undefined,
  'must be host names, IP addresses or CIDR ranges separated by commas, such as hooks.example.com,10.0.0.0/8'
)

/**
 * The shortest prefix a trusted proxy range may have. A proxy is a few machines: a range as wide as
 * 0.0.0.0/0 or ::/0 would believe forwarding headers from anyone, who could then choose the client
 * address the audit log records and the scheme and host the service takes the request for.
 */
const WIDEST_PROXY_PREFIX = 8

/** `--trust-proxy` and `TESSERA_TRUSTED_PROXIES`: the reverse proxies whose forwarding headers are believed. */
export const trustedProxiesSchema = listSchema(
  (item) => parseAddressEntry(item) !== undefined,
  'must be IP addresses or CIDR ranges separated by commas, such as 10.0.0.5,10.1.0.0/16'
)
  .refine((items) => items.length > 0, 'must name at least one proxy address')
  .refine(
    (items) => items.every((item) => (parseAddressEntry(item)?.prefix ?? WIDEST_PROXY_PREFIX) >= WIDEST_PROXY_PREFIX),
    `must name the proxies, not a range wider than /${WIDEST_PROXY_PREFIX}: forwarding headers from every address in it would be believed`
  )

const masterKeySchema = z
  .string()
  .refine(
    (value) => /^[A-Za-z0-9+/]+={0,2}$/.test(value.trim()) && Buffer.from(value.trim(), 'base64').length === MASTER_KEY_BYTES,
    `must be the base64 encoding of ${MASTER_KEY_BYTES} bytes (make one with \`openssl rand -base64 ${MASTER_KEY_BYTES}\`)`
  )

/** The URL parameters naming TLS files, which the driver reads as it opens its first connection. */
const TLS_FILE_PARAMETERS = ['sslrootcert', 'sslcert', 'sslkey'] as const

/** The TLS files a database URL names that cannot be read, as `parameter (path)`. */
function unreadableTlsFiles(url: URL): string[] {
  return TLS_FILE_PARAMETERS.flatMap((parameter) => {
    const file = url.searchParams.get(parameter)
    if (!file) return []
    try {
      accessSync(file, constants.R_OK)
      return []
    } catch {
      return [`${parameter} (${file})`]
    }
  })
}

/** The values of sslmode node-postgres knows; any other would be taken as a request for TLS. */
const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify']

/**
 * node-postgres takes sslmode prefer, require and verify-ca for verify-full (unless uselibpqcompat=true), and
 * says so on stderr in a multi-line "SECURITY WARNING" once per process. Naming verify-full does the same without it.
 */
function withoutSslModeAlias(url: string): string {
  if (/[?&]uselibpqcompat=/i.test(url)) return url
  return url.replace(/([?&]sslmode=)(prefer|require|verify-ca)(?=&|#|$)/g, '$1verify-full')
}

/** A PostgreSQL URL; it may hold a password, so it is never echoed (the paths of its TLS files are). */
export const databaseUrlSchema = z
  .string()
  .refine((value) => URL.canParse(value) && /^postgres(ql)?:$/.test(new URL(value).protocol) && new URL(value).pathname.length > 1, 'must be a PostgreSQL URL naming a database, such as postgres://tessera@db.example:5432/tessera')
  .superRefine((value, context) => {
    if (!URL.canParse(value)) return // refused above
    const unreadable = unreadableTlsFiles(new URL(value))
    if (unreadable.length > 0) context.addIssue({ code: 'custom', message: `names TLS files that cannot be read: ${unreadable.join(', ')}` })
    const sslmode = new URL(value).searchParams.get('sslmode')
    if (sslmode !== null && !SSL_MODES.includes(sslmode)) {
      context.addIssue({ code: 'custom', message: `has sslmode=${JSON.stringify(sslmode)}, which is not a mode: use verify-full (with sslrootcert=FILE) for TLS, or disable` })
    }
  })
  .transform(withoutSslModeAlias)

/** `--upgrade-wait` and `TESSERA_UPGRADE_WAIT`: seconds, as milliseconds. */
export const upgradeWaitSchema = z
  .string()
  .regex(/^\d{1,4}$/, 'must be a whole number of seconds from 0 to 3600')
  .transform((seconds) => Number(seconds) * 1000)
  .refine((ms) => ms <= 3_600_000, 'must be a whole number of seconds from 0 to 3600')

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

const variables = {
  TESSERA_DATA_DIR: z.string(),
  TESSERA_MASTER_KEY: masterKeySchema,
  TESSERA_DATABASE_URL: databaseUrlSchema,
  TESSERA_HOST: hostSchema,
  TESSERA_PORT: listenPortSchema,
  TESSERA_ALLOWED_HOSTS: allowedHostsSchema,
  TESSERA_TLS_CERT: z.string(),
  TESSERA_TLS_KEY: z.string(),
  TESSERA_TRUSTED_PROXIES: trustedProxiesSchema,
  TESSERA_WEBHOOK_ALLOWED_HOSTS: webhookAllowedHostsSchema,
  TESSERA_WEBHOOK_RETRY_BASE_MS: z
    .string()
    .regex(/^[1-9]\d{0,7}$/, 'must be a whole number of milliseconds from 1 to 99999999')
    .transform(Number),
  TESSERA_CORS_ORIGINS: listSchema(isOrigin, 'must be origins separated by commas, each scheme://host[:port] without a path, such as https://shop.example.com'),
  TESSERA_BODY_LIMIT: z
    .string()
    .regex(/^[1-9]\d{0,9}$/, 'must be a whole number of bytes from 1 to 9999999999')
    .transform(Number),
  TESSERA_UPGRADE_WAIT: upgradeWaitSchema,
  TESSERA_LOG_LEVEL: z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`),
  TESSERA_SMTP_HOST: hostSchema,
  TESSERA_SMTP_PORT: portSchema(1),
  TESSERA_SMTP_SECURE: flagSchema,
  TESSERA_SMTP_REQUIRE_TLS: flagSchema,
  TESSERA_SMTP_USER: z.string(),
  TESSERA_SMTP_PASSWORD: z.string(),
  TESSERA_SMTP_FROM: z.string().refine(isMailbox, 'must be an e-mail address, optionally with a name, such as Tessera <vault@example.com>'),
  TESSERA_PUBLIC_URL: z.string().refine(isHttpUrl, 'must be an http or https URL, such as https://vault.example.com'),
  TESSERA_SESSION_MAX_TTL: durationSchema(60_000, 30 * 86_400_000, 'must be a duration from 1 minute to 30 days, such as 3600, 90m, 24h or 7d'),
  TESSERA_CVC_RETENTION: z
    .string()
    .refine((value) => canParse(parseCvcRetention, value), 'must be a whole number of seconds (3600) or an ISO 8601 duration (PT1H), from 0 to 24 hours')
    .transform((value) => parseCvcRetention(value)),
  TESSERA_AUDIT_RETENTION_DAYS: z
    .string()
    .regex(/^\d{1,5}$/, `must be a whole number of days from 0 to ${MAX_AUDIT_RETENTION_DAYS} (0: keep for ever)`)
    .transform(Number)
    .refine((days) => days <= MAX_AUDIT_RETENTION_DAYS, `must be a whole number of days from 0 to ${MAX_AUDIT_RETENTION_DAYS} (0: keep for ever)`)
}

/** The one schema of the environment. */
export const environmentSchema = z.object(variables).partial()

export type Environment = z.infer<typeof environmentSchema>
export type EnvName = keyof typeof variables

/** Variables whose values are never echoed in a message. */
const SECRET: ReadonlySet<EnvName> = new Set(['TESSERA_MASTER_KEY', 'TESSERA_SMTP_PASSWORD', 'TESSERA_DATABASE_URL'])

/** What `--help` and docs/cli.md say about each variable. */
export const ENVIRONMENT_HELP: Record<EnvName, { values: string; meaning: string; default: string }> = {
  TESSERA_DATA_DIR: { values: 'a directory path', meaning: 'the data directory, when --data-dir is not given', default: 'the OS app-data folder' },
  TESSERA_MASTER_KEY: { values: `base64 of ${MASTER_KEY_BYTES} bytes`, meaning: 'the master key; wins over master.key', default: '<data-dir>/master.key' },
  TESSERA_DATABASE_URL: {
    values: 'postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE',
    meaning: 'a team vault in PostgreSQL, when --database-url is not given',
    default: 'none: the SQLite file in the data directory'
  },
  TESSERA_HOST: { values: 'an IP address or host name', meaning: 'address to listen on, when --host is not given', default: '127.0.0.1' },
  TESSERA_PORT: { values: '0-65535 (0: a free port)', meaning: 'port to listen on, when --port is not given', default: '4390' },
  TESSERA_ALLOWED_HOSTS: {
    values: 'host names, comma-separated',
    meaning: 'extra Host header names to accept, when --allowed-hosts is not given (required beyond loopback)',
    default: 'loopback names only'
  },
  TESSERA_TLS_CERT: { values: 'a PEM file', meaning: 'TLS certificate chain, when --tls-cert is not given', default: 'none (plain HTTP)' },
  TESSERA_TLS_KEY: { values: 'a PEM file', meaning: 'TLS private key, when --tls-key is not given', default: 'none' },
  TESSERA_TRUSTED_PROXIES: {
    values: 'IP addresses or CIDR ranges, comma-separated',
    meaning: 'reverse proxies whose X-Forwarded-* headers are believed, when --trust-proxy is not given',
    default: 'none'
  },
  TESSERA_WEBHOOK_ALLOWED_HOSTS: {
    values: 'host names, IP addresses or CIDR ranges, comma-separated',
    meaning: 'where webhook deliveries may go besides loopback addresses, when --webhook-allowed-hosts is not given',
    default: 'loopback only'
  },
  TESSERA_WEBHOOK_RETRY_BASE_MS: {
    values: 'milliseconds, at least 1',
    meaning: 'delay before a failed webhook delivery is retried; it doubles after each failure (8 attempts, at most 1 hour apart)',
    default: '30000 (30 seconds)'
  },
  TESSERA_CORS_ORIGINS: { values: 'origins, comma-separated', meaning: 'browser origins allowed by CORS', default: 'none (CORS off)' },
  TESSERA_BODY_LIMIT: { values: 'bytes, at least 1', meaning: 'largest accepted request body', default: '5242880 (5 MB)' },
  TESSERA_UPGRADE_WAIT: {
    values: 'seconds, 0 to 3600',
    meaning: 'team vault: how long `serve` waits for instances of an older version to step aside before it migrates the database (then it refuses, exit 5)',
    default: '60'
  },
  TESSERA_LOG_LEVEL: { values: LOG_LEVELS.join(', '), meaning: 'log level (logs go to stderr as JSON lines)', default: 'info' },
  TESSERA_SMTP_HOST: { values: 'an IP address or host name', meaning: 'SMTP server; without it mail waits in the outbox', default: 'none' },
  TESSERA_SMTP_PORT: { values: '1-65535', meaning: 'SMTP port', default: '465 with TESSERA_SMTP_SECURE, else 587' },
  TESSERA_SMTP_SECURE: { values: 'true or false', meaning: 'TLS from the first byte (SMTPS)', default: 'false (STARTTLS when offered)' },
  TESSERA_SMTP_REQUIRE_TLS: { values: 'true or false', meaning: 'refuse to send without TLS (STARTTLS, or TLS from the first byte)', default: 'true' },
  TESSERA_SMTP_USER: { values: 'text', meaning: 'SMTP user name', default: 'none' },
  TESSERA_SMTP_PASSWORD: { values: 'text', meaning: 'SMTP password', default: 'none' },
  TESSERA_SMTP_FROM: { values: 'an address, optionally with a name', meaning: 'From header of mail', default: 'Tessera <tessera@localhost>' },
  TESSERA_PUBLIC_URL: { values: 'an http(s) URL', meaning: 'base of the links in mail', default: "the service's own URL" },
  TESSERA_SESSION_MAX_TTL: { values: 'seconds, or a number with s, m, h or d (90m, 24h, 7d); 1 minute to 30 days', meaning: "how far ahead a session's expires_at may be set", default: '24h' },
  TESSERA_CVC_RETENTION: { values: 'seconds (3600) or an ISO 8601 duration (PT1H), 0 to 24 hours; 0: never stored', meaning: "how long a card's CVC is kept", default: '3600 (1 hour)' },
  TESSERA_AUDIT_RETENTION_DAYS: {
    values: `whole days, 0 to ${MAX_AUDIT_RETENTION_DAYS}; 0: keep for ever`,
    meaning: 'audit entries older than this are archived to <data-dir>/audit-archive/ and pruned, hourly',
    default: '0 (keep for ever)'
  }
}

export const ENV_NAMES = Object.keys(variables) as EnvName[]

/** The values of "TESSERA_X=value", quoted for a message unless secret. */
function echo(name: EnvName, value: string): string {
  return SECRET.has(name) ? '' : ` (got ${JSON.stringify(value)})`
}

/**
 * Validates the variables `names` of `env`.
 * @throws CliError (USAGE) naming the first variable at fault
 */
export function readEnvironment(names: readonly EnvName[], env: NodeJS.ProcessEnv = process.env): Environment {
  const raw: Partial<Record<EnvName, string>> = {}
  for (const name of names) if (env[name]) raw[name] = env[name]
  const result = environmentSchema.safeParse(raw)
  if (result.success) return result.data
  const name = result.error.issues[0].path[0] as EnvName
  throw new CliError('USAGE', `${name} ${result.error.issues[0].message}${echo(name, raw[name]!)}.`, `correct or unset ${name}; \`tessera --help\` lists every variable and its valid values.`)
}

/** SMTP and link settings from the environment. */
export function mailConfig(env: Environment): MailConfig {
  return {
    host: env.TESSERA_SMTP_HOST,
    port: env.TESSERA_SMTP_PORT,
    secure: env.TESSERA_SMTP_SECURE,
    requireTLS: env.TESSERA_SMTP_REQUIRE_TLS,
    user: env.TESSERA_SMTP_USER,
    password: env.TESSERA_SMTP_PASSWORD,
    from: env.TESSERA_SMTP_FROM,
    publicBaseUrl: env.TESSERA_PUBLIC_URL
  }
}
