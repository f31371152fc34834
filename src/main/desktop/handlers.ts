/**
 * The IPC door: one handler per method of `TesseraApi`, over the same services
 * as the REST server, with the desktop user (the tenant OWNER) as actor so every
 * GUI action lands in the audit log. Payloads come from a renderer and are
 * untrusted: each handler parses its arguments with the contracts (the same
 * schemas as REST) and hands the services typed commands. Electron-free:
 * Electron's ipcMain and the browser tests' HTTP transport both call this table.
 */
import { z } from 'zod'
import * as contract from '../../shared/contracts'
import { parse } from '../app'
import { body, id, keyVersion, method, none, type DesktopHandlers } from './handler-method'
import type { DesktopVault } from './desktop-vault'
import { memoryClipboard, SecretClipboard } from './secret-clipboard'
import { memoryTeamCredentialStore, routeByConnection, TeamConnection } from './team-connection'
import { silentLogger, type Logger } from '../infra/logger'

export type { DesktopHandlers } from './handler-method'


export interface DesktopHandlerOptions {
  /** The system clipboard for copied secrets; an in-memory one without it (tests, the browser harness). */
  clipboard?: SecretClipboard
  /** The team vault connection; one kept in memory only without it (tests, the browser harness). */
  team?: TeamConnection
  logger?: Logger
}

/** Every channel, answered by the embedded vault or, while connected, by the team vault (team-connection.ts). */
export function createDesktopHandlers(desktop: DesktopVault, options: DesktopHandlerOptions = {}): DesktopHandlers {
  const team = options.team ?? new TeamConnection({ store: memoryTeamCredentialStore(), logger: options.logger ?? silentLogger() })
  const embeddedStatus = () => desktop.status()
  return routeByConnection(createEmbeddedHandlers(desktop, options), team, embeddedStatus)
}

/** The embedded vault's table: the services in this process, as the tenant OWNER. */
function createEmbeddedHandlers(desktop: DesktopVault, options: DesktopHandlerOptions): Omit<DesktopHandlers, 'connection'> {
  const clipboard = options.clipboard ?? new SecretClipboard(memoryClipboard())
  const services = () => desktop.requireVault().services
  const owner = () => desktop.actor()

  return {
    vault: {
      status: method(none, () => desktop.status()),
      create: method(z.tuple([contract.createVaultRequest]), ([request]) => desktop.create(request)),
      unlock: method(none, () => desktop.unlock()),
      lock: method(none, () => desktop.lock()),
      reportActivity: method(none, () => desktop.reportActivity())
    },
    settings: {
      get: method(none, async () => desktop.settings.view()),
      update: method(z.tuple([body]), ([patch]) => desktop.updateSettings(patch))
    },
    tokens: {
      list: method(z.tuple([contract.listTokensQuery]), ([query]) => services().tokens.list(owner(), query)),
      get: method(z.tuple([id]), ([tokenId]) => services().tokens.get(owner(), tokenId)),
      create: method(z.tuple([body]), async ([request]) => (await services().tokens.create(owner(), parse(contract.createTokenBody, request))).token),
      update: method(z.tuple([id, body]), ([tokenId, patch]) => services().tokens.update(owner(), tokenId, parse(contract.updateTokenBody, patch))),
      delete: method(z.tuple([id]), ([tokenId]) => services().tokens.delete(owner(), tokenId)),
      reveal: method(z.tuple([id, z.string().max(200)]), ([tokenId, reason]) => services().tokens.reveal(owner(), tokenId, parse(contract.revealReason, reason, 'reason')))
    },
    tokenize: {
      run: method(z.tuple([z.unknown()]), ([request]) => services().tokenize.run(owner(), request))
    },
    logs: {
      list: method(z.tuple([contract.listLogsQuery]), ([query]) => services().logs.list(owner(), query)),
      entityTypes: method(none, () => services().logs.listEntityTypes(owner())),
      activity: method(z.tuple([contract.logFiltersQuery, contract.activityPeriods]), ([query, periods]) => services().logs.activity(owner(), query, periods)),
      export: method(z.tuple([contract.logFiltersQuery]), ([query]) => services().logs.export(owner(), query)),
      archive: method(z.tuple([contract.archiveBefore]), ([before]) => desktop.archiveAuditLog(before)),
      archiveStatus: method(none, async () => services().auditArchive.status())
    },
    applications: {
      list: method(z.tuple([contract.listApplicationsQuery]), ([query]) => services().applications.list(owner(), query)),
      get: method(z.tuple([id]), ([applicationId]) => services().applications.get(owner(), applicationId)),
      create: method(z.tuple([body]), ([request]) => services().applications.create(owner(), parse(contract.createApplicationCommand, request))),
      update: method(z.tuple([id, body]), ([applicationId, request]) =>
        services().applications.update(owner(), applicationId, parse(contract.updateApplicationCommand, request))
      ),
      regenerate: method(z.tuple([id]), ([applicationId]) => services().applications.regenerate(owner(), applicationId)),
      delete: method(z.tuple([id]), ([applicationId]) => services().applications.delete(owner(), applicationId)),
      listKeys: method(z.tuple([id]), ([applicationId]) => services().applications.listKeys(owner(), applicationId)),
      createKey: method(z.tuple([id]), ([applicationId]) => services().applications.createKey(owner(), applicationId)),
      deleteKey: method(z.tuple([id, id]), ([applicationId, keyId]) => services().applications.deleteKey(owner(), applicationId, keyId))
    },
    sessions: {
      create: method(z.tuple([id]), async ([applicationId]) => services().sessions.create(await services().applications.actingAs(owner(), applicationId, 'public'), owner())),
      authorize: method(z.tuple([id, body]), async ([applicationId, request]) => {
        const application = await services().applications.actingAs(owner(), applicationId, 'private')
        return services().sessions.authorize(application, parse(contract.authorizeSessionBody, request), owner())
      }),
      list: method(z.tuple([contract.listSessionsQuery]), ([query]) => services().sessions.list(owner(), query)),
      revoke: method(z.tuple([id]), ([sessionId]) => services().sessions.revoke(owner(), sessionId))
    },
    members: {
      list: method(z.tuple([contract.listMembersQuery]), ([query]) => services().members.list(owner(), query)),
      delete: method(z.tuple([id]), ([memberId]) => services().members.delete(owner(), memberId))
    },
    invitations: {
      list: method(z.tuple([contract.listInvitationsQuery]), ([query]) => services().invitations.list(owner(), query)),
      create: method(z.tuple([body]), ([request]) => services().invitations.create(owner(), parse(contract.createInvitationCommand, request))),
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
      list: method(z.tuple([contract.listOutboxQuery]), ([query]) => services().mail.listOutbox(query))
    },
    webhooks: {
      list: method(z.tuple([contract.listWebhooksQuery]), ([query]) => services().webhooks.list(owner(), query)),
      get: method(z.tuple([id]), ([webhookId]) => services().webhooks.get(owner(), webhookId)),
      create: method(z.tuple([body]), ([request]) => services().webhooks.create(owner(), parse(contract.webhookBody, request))),
      update: method(z.tuple([id, body]), ([webhookId, request]) => services().webhooks.update(owner(), webhookId, parse(contract.webhookBody, request))),
      delete: method(z.tuple([id]), ([webhookId]) => services().webhooks.delete(owner(), webhookId)),
      eventTypes: method(none, async () => services().webhooks.eventTypes()),
      deliveries: method(z.tuple([id, contract.listWebhookDeliveriesQuery]), ([webhookId, query]) => services().webhooks.listDeliveries(owner(), webhookId, query))
    },
    clipboard: {
      copySecret: method(z.tuple([z.string().min(1, 'is required').max(10_000, 'is too long')]), async ([text]) => clipboard.copy(text))
    }
  }
}
