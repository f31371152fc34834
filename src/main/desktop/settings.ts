/**
 * Desktop settings: a small JSON file beside the vault (`desktop-settings.json`).
 * The SMTP password is not in it: it is a sealed setting inside the vault,
 * sealed with the tenant's data key (so key rotation covers it), and the file
 * only says whether one is set. Files of earlier versions held it sealed under
 * the master key; it moves into the vault the first time the vault is unlocked.
 */
import { readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { isHostOrIp } from '../infra/address-list'
import { z } from 'zod'
import { isMailbox, nameText } from '../../shared/contracts/fields'
import { webhookUrl } from '../../shared/contracts/webhooks'
import type { DesktopSettings } from '../../shared/ipc'
import { parse, ValidationError } from '../app'
import { openUnderMasterKey, type MasterKey } from '../bootstrap/master-key'
import type { MailConfig } from '../infra/mail-transport'
import { SMTP_PASSWORD_SETTING } from '../app/sealed-settings.service'
import { DEFAULT_IDLE_LOCK_MINUTES, MAX_IDLE_LOCK_MINUTES, MIN_IDLE_LOCK_MINUTES } from './idle-lock'
import { MAX_AUDIT_RETENTION_DAYS } from '../app/audit-archive'

export const SETTINGS_FILE = 'desktop-settings.json'
export const DEFAULT_PORT = 4390

const SMTP_PASSWORD_CONTEXT = 'tessera:desktop:smtp-password'

const port = z.number().int('must be a whole number').min(1, 'must be from 1 to 65535').max(65535, 'must be from 1 to 65535')
const idleLockMinutes = z
  .number()
  .int('must be a whole number of minutes')
  .min(MIN_IDLE_LOCK_MINUTES, `must be from ${MIN_IDLE_LOCK_MINUTES} to ${MAX_IDLE_LOCK_MINUTES} minutes`)
  .max(MAX_IDLE_LOCK_MINUTES, `must be from ${MIN_IDLE_LOCK_MINUTES} to ${MAX_IDLE_LOCK_MINUTES} minutes`)
const auditRetentionDays = z
  .number()
  .int('must be a whole number of days')
  .min(0, `must be from 0 (keep for ever) to ${MAX_AUDIT_RETENTION_DAYS} days`)
  .max(MAX_AUDIT_RETENTION_DAYS, `must be from 0 (keep for ever) to ${MAX_AUDIT_RETENTION_DAYS} days`)
/** The link URL as files of earlier versions may hold it: read as it is, so a file is never dropped for it. */
const storedHttpUrl = z
  .string()
  .max(2000)
  .refine((value) => /^https?:\/\/[^\s]+$/.test(value), 'must be an http or https URL')

/**
 * The public base URL of invitation links, as a change may set it. It is
 * written to the audit log and the settings file, and links are built on it:
 * an http or https URL without spaces or control characters, without a user
 * name or password (the rule of webhook URLs), and without a query or fragment.
 */
const httpUrl = z
  .string()
  .max(2000, 'must be at most 2000 characters')
  .refine((value) => !/[\s\p{Cc}]/u.test(value), 'must not contain spaces or control characters (line breaks, tabs, NUL)')
  .refine((value) => /^https?:\/\//.test(value), 'must be an http or https URL, such as https://vault.example.com')
  .pipe(webhookUrl)
  .refine((value) => !/[?#]/.test(value), 'must not hold a query or fragment: invitation links are built on it')

/** The rule of `TESSERA_SMTP_HOST`: an IP address or a DNS name, so no spaces or control characters. */
const smtpHost = z
  .string()
  .min(1, 'is required')
  .max(255)
  .refine(isHostOrIp, 'must be a host name or an IP address, such as smtp.example.com or 10.0.0.5')

/** The rule of `TESSERA_SMTP_FROM`: an address, optionally with a name; on one line (no control characters: no header can follow it). */
const smtpFrom = nameText(z.string().min(3, 'is required').max(320)).refine(
  isMailbox,
  'must be an e-mail address, optionally with a name, such as Tessera <vault@example.com>'
)

const smtpInput = z.strictObject({
  host: smtpHost,
  port,
  secure: z.boolean(),
  requireTLS: z.boolean().optional(),
  user: z.string().max(255).optional(),
  password: z.string().max(1000).optional(),
  hasPassword: z.boolean().optional(),
  from: smtpFrom
})

/** What the renderer may change; validated like any other IPC payload. */
export const settingsPatchSchema = z.strictObject({
  port: port.optional(),
  publicBaseUrl: httpUrl.nullable().optional(),
  smtp: smtpInput.nullable().optional(),
  idleLockMinutes: idleLockMinutes.optional(),
  auditRetentionDays: auditRetentionDays.optional()
})

/** The file's shape: whether a password is set (`sealedPassword`: the master-sealed password of earlier versions). */
const storedSchema = z.object({
  port: port.default(DEFAULT_PORT),
  idleLockMinutes: idleLockMinutes.default(DEFAULT_IDLE_LOCK_MINUTES),
  auditRetentionDays: auditRetentionDays.default(0),
  publicBaseUrl: storedHttpUrl.optional(),
  smtp: z
    .object({
      host: z.string(),
      port,
      secure: z.boolean(),
      requireTLS: z.boolean().optional(),
      user: z.string().optional(),
      hasPassword: z.boolean().optional(),
      sealedPassword: z.string().optional(),
      from: z.string()
    })
    .optional()
})

type StoredSettings = z.infer<typeof storedSchema>

const defaults = (): StoredSettings => ({ port: DEFAULT_PORT, idleLockMinutes: DEFAULT_IDLE_LOCK_MINUTES, auditRetentionDays: 0 })
type StoredSmtp = NonNullable<StoredSettings['smtp']>

/** Whether mail to this server must be encrypted: implicit TLS, or STARTTLS unless turned off explicitly. */
function tlsRequired(smtp: StoredSmtp): boolean {
  return smtp.secure || smtp.requireTLS !== false
}

/** Whether a password is stored for this SMTP account (in the vault, or sealed in the file by an earlier version). */
function storesPassword(smtp: StoredSmtp | undefined): boolean {
  return smtp !== undefined && (smtp.hasPassword === true || smtp.sealedPassword !== undefined)
}

/**
 * The audit log's account of an SMTP change, or undefined when nothing
 * changed. Names the host (not secret), never the user or the password.
 */
function describeSmtpChange(before: StoredSmtp | undefined, after: StoredSmtp | undefined, passwordChange: string | null | undefined): string | undefined {
  if (!before && !after) return undefined
  if (!after) return 'SMTP settings removed'
  if (!before) return `SMTP settings added (host ${after.host})`
  const notes: string[] = []
  if (before.host !== after.host || before.user !== after.user) notes.push(`host or user changed (host ${after.host})`)
  if (passwordChange === null && storesPassword(before)) notes.push('stored password dropped')
  else if (typeof passwordChange === 'string') notes.push(storesPassword(before) ? 'password replaced' : 'password set')
  if (tlsRequired(before) !== tlsRequired(after)) notes.push(tlsRequired(after) ? 'TLS now required' : 'TLS no longer required')
  const otherChange = before.port !== after.port || before.secure !== after.secure || before.from !== after.from
  if (!notes.length && !otherChange) return undefined
  return `SMTP settings changed${notes.length ? `: ${notes.join('; ')}` : ''}`
}

function describeRetentionChange(before: number, after: number): string {
  const days = (value: number) => (value === 0 ? 'for ever' : value === 1 ? '1 day' : `${value} days`)
  return `Audit retention changed from ${days(before)} to ${days(after)}`
}

/** Where the SMTP password goes: the open vault's sealed settings. */
export interface SettingsSecrets {
  put(name: string, value: string | null): Promise<void>
}

/** A settings change, for the audit log. */
export interface SettingsChange {
  /** What changed: names, the port, the link URL and the SMTP host; never the SMTP user or password. */
  message: string
  /** Only the port changed: accepted while the vault is locked (to unlock on a free port), and logged when it opens. */
  portOnly: boolean
  /**
   * The running service must restart for the change to apply: it listens on
   * the port, and builds its mailer (SMTP, link URL) as it starts. The idle
   * lock and the audit retention are read as they are needed.
   */
  restartsService: boolean
}

export class SettingsStore {
  private stored: StoredSettings = defaults()

  constructor(private readonly dataDir: string) {}

  get file(): string {
    return join(this.dataDir, SETTINGS_FILE)
  }

  /** Reads the file; a missing or unreadable file means defaults (never blocks the app from starting). */
  async load(): Promise<void> {
    try {
      const parsed = storedSchema.safeParse(JSON.parse(await readFile(this.file, 'utf8')))
      this.stored = parsed.success ? parsed.data : defaults()
    } catch {
      this.stored = defaults()
    }
  }

  get port(): number {
    return this.stored.port
  }

  get idleLockMinutes(): number {
    return this.stored.idleLockMinutes
  }

  /** Days audit entries are kept before the retention job archives them; 0: for ever. */
  get auditRetentionDays(): number {
    return this.stored.auditRetentionDays
  }

  /** The settings as the renderer sees them: no password, only whether one is set; `requireTLS` as it applies. */
  view(): DesktopSettings {
    const { smtp, ...rest } = this.stored
    if (!smtp) return { ...rest }
    const { sealedPassword, hasPassword, ...visible } = smtp
    return { ...rest, smtp: { ...visible, requireTLS: smtp.requireTLS !== false, hasPassword: hasPassword === true || sealedPassword !== undefined } }
  }

  /** The mail service's configuration, with the SMTP password read from the vault. */
  mailConfig(password: string | undefined): MailConfig {
    const { smtp, publicBaseUrl } = this.stored
    const config: MailConfig = publicBaseUrl ? { publicBaseUrl } : {}
    if (!smtp) return config
    const { sealedPassword, hasPassword, ...rest } = smtp
    Object.assign(config, rest)
    // A password left in the vault by a change made while it was locked is not used once the settings say none.
    if (password !== undefined && (hasPassword || sealedPassword !== undefined)) config.password = password
    return config
  }

  /** A password sealed under the master key by an earlier version; undefined when there is none (or another vault sealed it). */
  legacyPassword(masterKey: MasterKey): string | undefined {
    const sealed = this.stored.smtp?.sealedPassword
    if (sealed === undefined) return undefined
    try {
      return openUnderMasterKey<string>(masterKey, Buffer.from(sealed, 'base64'), SMTP_PASSWORD_CONTEXT)
    } catch {
      return undefined
    }
  }

  /** Moves a password of an earlier version from the file into the vault (the first unlock after an upgrade). */
  async migrateLegacyPassword(masterKey: MasterKey, secrets: SettingsSecrets): Promise<void> {
    const smtp = this.stored.smtp
    if (smtp?.sealedPassword === undefined) return
    const password = this.legacyPassword(masterKey)
    if (password !== undefined) await secrets.put(SMTP_PASSWORD_SETTING, password)
    const { sealedPassword: _moved, ...rest } = smtp
    const next = { ...this.stored, smtp: { ...rest, hasPassword: password !== undefined } }
    await this.write(next)
    this.stored = next
  }

  /**
   * Validates and saves a patch. A new SMTP password goes into the vault, so it
   * needs the vault open; `hasPassword: true` without a password keeps the
   * stored one, but only for the same host and user: a password is never sent
   * to another server or account than the one it was entered for. A change is
   * handed to `audit` before anything is stored (a failed audit changes nothing).
   */
  async update(
    patch: unknown,
    secrets: SettingsSecrets | undefined,
    audit: (change: SettingsChange) => Promise<void> = async () => undefined
  ): Promise<DesktopSettings> {
    const input = parse(settingsPatchSchema, patch)
    const next: StoredSettings = { ...this.stored }
    if (input.port !== undefined) next.port = input.port
    if (input.idleLockMinutes !== undefined) next.idleLockMinutes = input.idleLockMinutes
    if (input.auditRetentionDays !== undefined) next.auditRetentionDays = input.auditRetentionDays
    if (input.publicBaseUrl === null) delete next.publicBaseUrl
    else if (input.publicBaseUrl !== undefined) next.publicBaseUrl = input.publicBaseUrl
    // undefined: the stored password stays; null: it is dropped; a string: the new one.
    let passwordChange: string | null | undefined
    if (input.smtp === null) {
      delete next.smtp
      passwordChange = null
    } else if (input.smtp !== undefined) {
      const { password, hasPassword, ...smtp } = input.smtp
      const previous = this.stored.smtp
      const sameAccount = previous !== undefined && previous.host === smtp.host && previous.user === smtp.user
      const newPassword = password !== undefined && password !== ''
      const keeps = !newPassword && hasPassword === true && sameAccount && storesPassword(previous)
      if (newPassword && !secrets) throw ValidationError.field('smtp.password', 'can only be saved while the vault is unlocked')
      if (!keeps) passwordChange = newPassword ? password : null
      next.smtp = { ...smtp, hasPassword: newPassword || keeps, ...(keeps && previous?.sealedPassword ? { sealedPassword: previous.sealedPassword } : {}) }
    }
    const port = next.port !== this.stored.port ? `Service port changed from ${this.stored.port} to ${next.port}` : undefined
    const idle =
      next.idleLockMinutes !== this.stored.idleLockMinutes ? `Idle lock changed from ${this.stored.idleLockMinutes} to ${next.idleLockMinutes} minutes` : undefined
    const retention = next.auditRetentionDays !== this.stored.auditRetentionDays ? describeRetentionChange(this.stored.auditRetentionDays, next.auditRetentionDays) : undefined
    const link = next.publicBaseUrl !== this.stored.publicBaseUrl ? `Invitation link URL ${next.publicBaseUrl ? `set to ${next.publicBaseUrl}` : 'removed'}` : undefined
    const smtpChange = describeSmtpChange(this.stored.smtp, next.smtp, passwordChange)
    const changes = [port, idle, retention, link, smtpChange].filter((change) => change !== undefined)
    if (changes.length) {
      const restartsService = port !== undefined || link !== undefined || smtpChange !== undefined
      await audit({ message: changes.join('; '), portOnly: changes.length === 1 && port !== undefined, restartsService })
    }
    if (passwordChange !== undefined) await secrets?.put(SMTP_PASSWORD_SETTING, passwordChange)
    await this.write(next)
    this.stored = next
    return this.view()
  }

  /** Restores a previous value (when a new port could not be bound). */
  async setPort(value: number): Promise<void> {
    const next = { ...this.stored, port: value }
    await this.write(next)
    this.stored = next
  }

  private async write(settings: StoredSettings): Promise<void> {
    // Write then rename, so a crash never leaves half a file.
    const temporary = `${this.file}.tmp`
    await writeFile(temporary, JSON.stringify(settings, null, 2) + '\n', { mode: 0o600 })
    await rename(temporary, this.file)
  }
}
