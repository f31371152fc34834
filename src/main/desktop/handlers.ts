/**
 * The IPC door: one handler per method of `TesseraApi`, over the same services
 * as the REST server, with the desktop user (the tenant OWNER) as actor so every
 * GUI action lands in the audit log. Payloads come from a renderer and are
 * untrusted: each handler checks the shape of its arguments (zod) before the
 * service validates the content. Electron-free: Electron's ipcMain and the
 * browser tests' HTTP transport both call this table.
 */
import { z } from 'zod'
import type { MethodOf, Namespace, OutboxMail, TesseraApi } from '../../shared/ipc'
import type { Actor } from '../domain/actor'
import { toIsoString } from '../domain/dates'
import type { OutboxEntry } from '../app/mail.service'
import { emailSchema, tenantNameSchema } from '../domain/fields'
import { toPage } from '../domain/pagination'
import { BusinessRuleError } from '../domain/errors'
import { parseOrThrow } from '../domain/validation'
import type { DesktopVault } from './desktop-vault'
import { memoryClipboard, SecretClipboard } from './secret-clipboard'

/** The handler of each channel: untrusted arguments in, the contract's result out. */
export type DesktopHandlers = {
  [N in Namespace]: { [M in MethodOf<N>]: TesseraApi[N][M] extends (...args: never[]) => infer R ? (...args: unknown[]) => R : never }
}

const id = z.string().min(1, 'is required').max(400, 'is too long')
const body = z.record(z.string(), z.unknown())
const page = { page: z.number().int().min(1).optional(), size: z.number().int().min(1).optional() }
const strings = z.array(z.string().max(400)).max(100)

/**
 * Metadata filters, passed on as given: zod's record would drop a `__proto__`
 * key, and the list would then match tokens that do not hold it.
 */
const metadataFilters = z.custom<Record<string, string>>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.entries(value).every(([key, item]) => key.length <= 200 && typeof item === 'string' && item.length <= 400),
  'must map metadata keys (at most 200 characters) to strings (at most 400)'
)

const tokenListQuery = z.strictObject({
  ...page,
  id: strings.optional(),
  type: strings.optional(),
  metadata: metadataFilters.optional()
})
const logFilters = {
  entity_type: z.string().max(50).optional(),
  entity_id: z.string().max(400).optional(),
  start_date: z.string().max(40).optional(),
  end_date: z.string().max(40).optional()
}
const logListQuery = z.strictObject({ ...page, ...logFilters })
const logFilterQuery = z.strictObject(logFilters)
const periods = z.array(z.tuple([z.number(), z.number()])).max(100)
const applicationListQuery = z.strictObject({ ...page, id: strings.optional(), type: strings.optional() })
const memberListQuery = z.strictObject({ ...page, user_id: strings.optional() })
const pageQuery = z.strictObject(page)
const invitationListQuery = z.strictObject({ ...page, status: z.enum(['PENDING', 'EXPIRED']).optional() })
const outboxListQuery = z.strictObject({ ...page, status: z.enum(['PENDING', 'SENT']).optional() })

const keyVersion = z.number().int('must be a whole number').min(1, 'must be 1 or more').max(2 ** 31 - 1)

/** The outbox keeps every waiting mail; the GUI pages through the newest ones. */
const OUTBOX_LIMIT = 500
const createVaultRequest = z.strictObject({
  tenantName: tenantNameSchema,
  ownerEmail: emailSchema.optional(),
  keyStorage: z.enum(['keychain', 'key-file'])
})

/** Wraps a handler so its arguments are checked first; errors name `args[i].field`. */
function method<S extends z.ZodType, R>(schema: S, run: (args: z.infer<S>) => Promise<R>): (...args: unknown[]) => Promise<R> {
  return async (...args: unknown[]) => run(parseOrThrow(schema, args, 'args'))
}

const none = z.tuple([])

/**
 * The GUI's typed query as the query-string object the services parse (they
 * are written for `ctx.query`): numbers become strings, `metadata` becomes
 * `metadata.<key>` parameters, empty values are dropped.
 */
export function toServiceQuery(query: Record<string, unknown>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) continue
    if (name === 'metadata' && typeof value === 'object') {
      for (const [key, item] of Object.entries(value as Record<string, string>)) if (item !== '') out[`metadata.${key}`] = item
    } else if (Array.isArray(value)) {
      out[name] = value.map(String)
    } else {
      out[name] = String(value)
    }
  }
  return out
}

function toOutboxMail(entry: OutboxEntry): OutboxMail {
  const mail: OutboxMail = {
    id: entry.id,
    recipient: entry.recipient,
    subject: entry.subject,
    status: entry.status === 'SENT' ? 'SENT' : 'PENDING',
    attempts: entry.attempts,
    created_at: toIsoString(entry.created_at)
  }
  if (entry.sent_at !== null) mail.sent_at = toIsoString(entry.sent_at)
  else mail.next_attempt_at = toIsoString(entry.next_attempt_at)
  if (entry.last_error) mail.last_error = entry.last_error
  if (entry.invitation_id) mail.invitation_id = entry.invitation_id
  if (entry.link) mail.link = entry.link
  return mail
}

export interface DesktopHandlerOptions {
  /** The system clipboard for copied secrets; an in-memory one without it (tests, the browser harness). */
  clipboard?: SecretClipboard
}

export function createDesktopHandlers(desktop: DesktopVault, options: DesktopHandlerOptions = {}): DesktopHandlers {
  const clipboard = options.clipboard ?? new SecretClipboard(memoryClipboard())
  const services = () => desktop.requireVault().services
  const owner = () => desktop.actor()

  /**
   * Acts as one of the tenant's applications: sessions are created and
   * authorized by applications, with their grants; the log names the person.
   */
  async function asApplication(applicationId: string, type: 'public' | 'private'): Promise<Actor> {
    const application = await services().applications.get(owner(), applicationId)
    if (application.type !== type) throw new BusinessRuleError(`Choose a ${type} application.`)
    return {
      type: 'application',
      id: application.id,
      tenantId: application.tenant_id,
      applicationType: application.type,
      permissions: application.permissions,
      rules: application.rules
    }
  }

  return {
    vault: {
      status: method(none, () => desktop.status()),
      create: method(z.tuple([createVaultRequest]), ([request]) => desktop.create(request)),
      unlock: method(none, () => desktop.unlock()),
      lock: method(none, () => desktop.lock())
    },
    settings: {
      get: method(none, async () => desktop.settings.view()),
      update: method(z.tuple([body]), ([patch]) => desktop.updateSettings(patch))
    },
    tokens: {
      list: method(z.tuple([tokenListQuery]), ([query]) => services().tokens.list(owner(), toServiceQuery(query))),
      get: method(z.tuple([id]), ([tokenId]) => services().tokens.get(owner(), tokenId)),
      create: method(z.tuple([body]), async ([request]) => (await services().tokens.create(owner(), request)).token),
      update: method(z.tuple([id, body]), ([tokenId, patch]) => services().tokens.update(owner(), tokenId, patch)),
      delete: method(z.tuple([id]), ([tokenId]) => services().tokens.delete(owner(), tokenId)),
      reveal: method(z.tuple([id, z.string().max(200)]), ([tokenId, reason]) => services().tokens.reveal(owner(), tokenId, reason))
    },
    tokenize: {
      run: method(z.tuple([z.unknown()]), ([request]) => services().tokenize.tokenize(owner(), request))
    },
    logs: {
      list: method(z.tuple([logListQuery]), ([query]) => services().logs.list(owner(), toServiceQuery(query))),
      entityTypes: method(none, () => services().logs.entityTypes(owner())),
      activity: method(z.tuple([logFilterQuery, periods]), ([query, ranges]) => services().logs.activity(owner(), toServiceQuery(query), ranges)),
      export: method(z.tuple([logFilterQuery]), ([query]) => services().logs.exportEntries(owner(), toServiceQuery(query)))
    },
    applications: {
      list: method(z.tuple([applicationListQuery]), ([query]) => services().applications.list(owner(), toServiceQuery(query))),
      get: method(z.tuple([id]), ([applicationId]) => services().applications.get(owner(), applicationId)),
      create: method(z.tuple([body]), ([request]) => services().applications.create(owner(), request)),
      update: method(z.tuple([id, body]), ([applicationId, request]) => services().applications.update(owner(), applicationId, request)),
      regenerate: method(z.tuple([id]), ([applicationId]) => services().applications.regenerate(owner(), applicationId)),
      delete: method(z.tuple([id]), ([applicationId]) => services().applications.delete(owner(), applicationId))
    },
    sessions: {
      create: method(z.tuple([id]), async ([applicationId]) => services().sessions.create(await asApplication(applicationId, 'public'), undefined, owner())),
      authorize: method(z.tuple([id, body]), async ([applicationId, request]) =>
        services().sessions.authorize(await asApplication(applicationId, 'private'), request, owner())
      ),
      list: method(z.tuple([pageQuery]), ([query]) => services().sessions.list(owner(), toServiceQuery(query))),
      revoke: method(z.tuple([id]), ([sessionId]) => services().sessions.revoke(owner(), sessionId))
    },
    members: {
      list: method(z.tuple([memberListQuery]), ([query]) => services().members.list(owner(), toServiceQuery(query))),
      delete: method(z.tuple([id]), ([memberId]) => services().members.delete(owner(), memberId))
    },
    invitations: {
      list: method(z.tuple([invitationListQuery]), ([query]) => services().invitations.list(owner(), toServiceQuery(query))),
      create: method(z.tuple([body]), ([request]) => services().invitations.create(owner(), request)),
      resend: method(z.tuple([id]), ([invitationId]) => services().invitations.resend(owner(), invitationId)),
      delete: method(z.tuple([id]), ([invitationId]) => services().invitations.delete(owner(), invitationId))
    },
    keys: {
      status: method(none, () => services().keys.status()),
      rotate: method(none, async () => {
        const vault = desktop.requireVault()
        await vault.services.keys.rotate(desktop.ceremonyActor(), vault.tenantId)
        return vault.services.keys.status()
      }),
      retire: method(z.tuple([keyVersion]), ([version]) => services().keys.retire(desktop.ceremonyActor(), desktop.requireVault().tenantId, version)),
      report: method(z.tuple([keyVersion]), ([version]) => services().keys.report(desktop.requireVault().tenantId, version)),
      rotateMaster: method(none, () => desktop.rotateMasterKey())
    },
    outbox: {
      list: method(z.tuple([outboxListQuery]), async ([query]) => {
        const mails = (await services().mail.listOutbox(OUTBOX_LIMIT)).filter((mail) => !query.status || mail.status === query.status)
        const size = query.size ?? 20
        const pageNumber = query.page ?? 1
        return toPage(mails.slice((pageNumber - 1) * size, pageNumber * size).map(toOutboxMail), mails.length, { page: pageNumber, size })
      })
    },
    clipboard: {
      copySecret: method(z.tuple([z.string().min(1, 'is required').max(10_000, 'is too long')]), async ([text]) => clipboard.copy(text))
    }
  }
}
