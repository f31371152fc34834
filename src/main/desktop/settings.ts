/**
 * Desktop settings: a small JSON file beside the vault (`desktop-settings.json`).
 * The SMTP password is stored sealed under the master key, so the file alone
 * reveals nothing secret and the password is only usable once the vault is unlocked.
 */
import { readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import type { DesktopSettings } from '../../shared/ipc'
import { openJson, sealJson } from '../crypto/aead'
import type { MasterKey } from '../crypto/types'
import { ValidationError } from '../services/errors'
import type { MailConfig } from '../services/mail.service'
import { parseOrThrow } from '../services/validation'

export const SETTINGS_FILE = 'desktop-settings.json'
export const DEFAULT_PORT = 4390

const SMTP_PASSWORD_CONTEXT = 'tessera:desktop:smtp-password'

const port = z.number().int('must be a whole number').min(1, 'must be from 1 to 65535').max(65535, 'must be from 1 to 65535')
const httpUrl = z
  .string()
  .max(2000)
  .refine((value) => /^https?:\/\/[^\s]+$/.test(value), 'must be an http or https URL')

const smtpInput = z.strictObject({
  host: z.string().min(1, 'is required').max(255),
  port,
  secure: z.boolean(),
  requireTLS: z.boolean().optional(),
  user: z.string().max(255).optional(),
  password: z.string().max(1000).optional(),
  hasPassword: z.boolean().optional(),
  from: z.string().min(3, 'is required').max(320)
})

/** What the renderer may change; validated like any other IPC payload. */
export const settingsPatchSchema = z.strictObject({
  port: port.optional(),
  publicBaseUrl: httpUrl.nullable().optional(),
  smtp: smtpInput.nullable().optional()
})

/** The file's shape: the password only as a sealed base64 string. */
const storedSchema = z.object({
  port: port.default(DEFAULT_PORT),
  publicBaseUrl: httpUrl.optional(),
  smtp: z
    .object({
      host: z.string(),
      port,
      secure: z.boolean(),
      requireTLS: z.boolean().optional(),
      user: z.string().optional(),
      sealedPassword: z.string().optional(),
      from: z.string()
    })
    .optional()
})

type StoredSettings = z.infer<typeof storedSchema>
type StoredSmtp = NonNullable<StoredSettings['smtp']>

/** Whether mail to this server must be encrypted: implicit TLS, or STARTTLS unless turned off explicitly. */
function tlsRequired(smtp: StoredSmtp): boolean {
  return smtp.secure || smtp.requireTLS !== false
}

/**
 * The audit log's account of an SMTP change, or undefined when nothing
 * changed. Names the host (not secret), never the user or the password.
 */
function describeSmtpChange(before: StoredSmtp | undefined, after: StoredSmtp | undefined): string | undefined {
  if (!before && !after) return undefined
  if (!after) return 'SMTP settings removed'
  if (!before) return `SMTP settings added (host ${after.host})`
  const notes: string[] = []
  if (before.host !== after.host || before.user !== after.user) notes.push(`host or user changed (host ${after.host})`)
  if (before.sealedPassword !== undefined && after.sealedPassword === undefined) notes.push('stored password dropped')
  else if (after.sealedPassword !== before.sealedPassword) notes.push(before.sealedPassword === undefined ? 'password set' : 'password replaced')
  if (tlsRequired(before) !== tlsRequired(after)) notes.push(tlsRequired(after) ? 'TLS now required' : 'TLS no longer required')
  const otherChange = before.port !== after.port || before.secure !== after.secure || before.from !== after.from
  if (!notes.length && !otherChange) return undefined
  return `SMTP settings changed${notes.length ? `: ${notes.join('; ')}` : ''}`
}


/** A settings change, for the audit log. */
export interface SettingsChange {
  /** What changed: names, the port, the link URL and the SMTP host; never the SMTP user or password. */
  message: string
  /** Only the port changed: accepted while the vault is locked (to unlock on a free port), and logged when it opens. */
  portOnly: boolean
}

export class SettingsStore {
  private stored: StoredSettings = { port: DEFAULT_PORT }

  constructor(private readonly dataDir: string) {}

  get file(): string {
    return join(this.dataDir, SETTINGS_FILE)
  }

  /** Reads the file; a missing or unreadable file means defaults (never blocks the app from starting). */
  async load(): Promise<void> {
    try {
      const parsed = storedSchema.safeParse(JSON.parse(await readFile(this.file, 'utf8')))
      this.stored = parsed.success ? parsed.data : { port: DEFAULT_PORT }
    } catch {
      this.stored = { port: DEFAULT_PORT }
    }
  }

  get port(): number {
    return this.stored.port
  }

  /** The settings as the renderer sees them: no password, only whether one is set; `requireTLS` as it applies. */
  view(): DesktopSettings {
    const { smtp, ...rest } = this.stored
    if (!smtp) return { ...rest }
    const { sealedPassword, ...visible } = smtp
    return { ...rest, smtp: { ...visible, requireTLS: smtp.requireTLS !== false, hasPassword: sealedPassword !== undefined } }
  }

  /** The mail service's configuration, the SMTP password opened under the master key. */
  mailConfig(masterKey: MasterKey): MailConfig {
    const { smtp, publicBaseUrl } = this.stored
    const config: MailConfig = publicBaseUrl ? { publicBaseUrl } : {}
    if (!smtp) return config
    const { sealedPassword, ...rest } = smtp
    Object.assign(config, rest)
    if (sealedPassword !== undefined) {
      try {
        config.password = openJson<string>(masterKey, Buffer.from(sealedPassword, 'base64'), SMTP_PASSWORD_CONTEXT)
      } catch {
        // Sealed under another vault's key: send without it; the user can enter it again.
      }
    }
    return config
  }

  /**
   * Validates and saves a patch. A new SMTP password needs the master key to
   * seal it; `hasPassword: true` without a password keeps the stored one, but
   * only for the same host and user: a password is never sent to another
   * server or account than the one it was entered for. A change is handed to
   * `audit` before the file is written (a failed audit changes nothing).
   */
  async update(
    patch: unknown,
    masterKey: MasterKey | undefined,
    audit: (change: SettingsChange) => Promise<void> = async () => undefined
  ): Promise<DesktopSettings> {
    const input = parseOrThrow(settingsPatchSchema, patch)
    const next: StoredSettings = { ...this.stored }
    if (input.port !== undefined) next.port = input.port
    if (input.publicBaseUrl === null) delete next.publicBaseUrl
    else if (input.publicBaseUrl !== undefined) next.publicBaseUrl = input.publicBaseUrl
    if (input.smtp === null) delete next.smtp
    else if (input.smtp !== undefined) {
      const { password, hasPassword, ...smtp } = input.smtp
      const previous = this.stored.smtp
      const sameAccount = previous !== undefined && previous.host === smtp.host && previous.user === smtp.user
      let sealedPassword: string | undefined
      if (password !== undefined && password !== '') {
        if (!masterKey) throw ValidationError.field('smtp.password', 'can only be saved while the vault is unlocked')
        sealedPassword = Buffer.from(sealJson(masterKey, password, SMTP_PASSWORD_CONTEXT)).toString('base64')
      } else if (hasPassword && sameAccount) {
        sealedPassword = previous.sealedPassword
      }
      next.smtp = { ...smtp, ...(sealedPassword !== undefined ? { sealedPassword } : {}) }
    }
    const port = next.port !== this.stored.port ? `Service port changed from ${this.stored.port} to ${next.port}` : undefined
    const link = next.publicBaseUrl !== this.stored.publicBaseUrl ? `Invitation link URL ${next.publicBaseUrl ? `set to ${next.publicBaseUrl}` : 'removed'}` : undefined
    const changes = [port, link, describeSmtpChange(this.stored.smtp, next.smtp)].filter((change) => change !== undefined)
    if (changes.length) await audit({ message: changes.join('; '), portOnly: changes.length === 1 && port !== undefined })
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
