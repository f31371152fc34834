/**
 * Builds every domain service from injected dependencies. The REST
 * server and the IPC handlers are thin adapters over what this returns.
 */
import type { Database } from '../storage/database'
import { WriteQueue } from '../storage/write-queue'
import type { Logger } from '../infra/logger'
import { ApplicationsService } from '../app/applications.service'
import { AuditArchiveService } from '../app/audit-archive'
import type { AuditChain } from '../app/audit-chain'
import { AuthService } from '../app/auth.service'
import { TEAM_CACHE_TTL_MS, type Clock } from '../app/service-context'
import { DEFAULT_CVC_RETENTION_MS } from '../domain/cvc-retention'
import { DenialsService } from '../app/denials.service'
import type { Keyring } from '../app/keyring'
import { InvitationsService } from '../app/invitations.service'
import { JobsService, standardSweeps } from '../app/jobs.service'
import { KeysService } from '../app/keys.service'
import { LogsService } from '../app/logs.service'
import { MailService } from '../app/mail.service'
import type { MailConfig } from '../infra/mail-transport'
import { MembersService } from '../app/members.service'
import { TenantsService } from '../app/tenants.service'
import type { ServiceContext } from '../app/service-context'
import { SealedSettingsService } from '../app/sealed-settings.service'
import { SessionsService } from '../app/sessions.service'
import { TokenizeService } from '../app/tokenize.service'
import { DetokenizeService } from '../app/detokenize.service'
import { TokenIntentsService } from '../app/token-intents.service'
import { IdempotencyService } from '../app/idempotency.service'
import { TokensService } from '../app/tokens.service'
import { WebhookDelivery, type WebhookDeliveryConfig } from '../app/webhook-delivery'
import { WebhookEvents } from '../app/webhook-events'
import { WebhookSigningKey } from '../app/webhook-signing-key'
import { WebhooksService } from '../app/webhooks.service'
import { ServiceHealth } from '../app/service-health'

export interface ServiceDeps {
  db: Database
  keyring: Keyring
  clock: Clock
  logger: Logger
  /** The audit chain every log entry is sealed into (see openAuditChain). */
  chain: AuditChain
  /** The vault's tenant. */
  tenantId: string
  /** SMTP and link settings; without SMTP, mail waits in the outbox. */
  mail?: MailConfig
  /** How far ahead a session's `expires_at` may be set; 24 hours by default. */
  sessionMaxTtlMs?: number
  /** How long a card's CVC is kept; one hour by default (cvc-retention.ts). */
  cvcRetentionMs?: number
  /** Where audit archives are written (`<data dir>/audit-archive`). */
  auditArchiveDir: string
  /** Days audit entries are kept before they are archived; 0 (the default) keeps them for ever. */
  auditRetentionDays?: () => number
  /** A team vault: other instances write too, so cached entries expire after TEAM_CACHE_TTL_MS. */
  teamVault?: boolean
  /** Webhook delivery: the allow-list, retries and time-outs. */
  webhooks?: WebhookDeliveryConfig
}

export function createServices(deps: ServiceDeps) {
  const context: ServiceContext = {
    reader: deps.db.reader,
    writes: new WriteQueue(deps.db.writer, { sealer: deps.chain }),
    keyring: deps.keyring,
    clock: deps.clock,
    logger: deps.logger,
    cvcRetentionMs: deps.cvcRetentionMs ?? DEFAULT_CVC_RETENTION_MS,
    cacheTtlMs: deps.teamVault ? TEAM_CACHE_TTL_MS : undefined,
    webhookEvents: new WebhookEvents(deps.db.reader)
  }
  const webhookEvents = context.webhookEvents!
  const webhookSigningKey = new WebhookSigningKey(context)
  const webhookDelivery = new WebhookDelivery(context, webhookEvents, webhookSigningKey, deps.webhooks)
  const auth = new AuthService(context)
  const tokens = new TokensService(context)
  const tokenIntents = new TokenIntentsService(context, tokens)
  const idempotency = new IdempotencyService(context)
  const logs = new LogsService(context, deps.chain)
  const applications = new ApplicationsService(context, auth)
  const mail = new MailService(context, deps.mail)
  const sessions = new SessionsService(context, auth, { maxTtlMs: deps.sessionMaxTtlMs })
  const invitations = new InvitationsService(context, mail)
  const keys = new KeysService(context, tokens)
  const auditArchive = new AuditArchiveService(context, deps.chain, {
    tenantId: deps.tenantId,
    directory: deps.auditArchiveDir,
    retentionDays: deps.auditRetentionDays ?? (() => 0)
  })
  return {
    context,
    auth,
    logs,
    denials: new DenialsService(context, deps.tenantId),
    tokens,
    tokenIntents,
    idempotency,
    tokenize: new TokenizeService(context, tokens),
    detokenize: new DetokenizeService(tokens),
    applications,
    sessions,
    members: new MembersService(context),
    tenants: new TenantsService(context),
    invitations,
    mail,
    keys,
    auditArchive,
    sealedSettings: new SealedSettingsService(context),
    webhooks: new WebhooksService(context, webhookEvents, webhookSigningKey, deps.tenantId),
    webhookEvents,
    webhookDelivery,
    health: new ServiceHealth(),
    jobs: new JobsService(context, standardSweeps({ tokens, tokenIntents, idempotency, applications, sessions, invitations, mail, logs, keys, auditArchive, webhooks: webhookDelivery }), {
      close: async () => {
        await mail.close()
        await webhookDelivery.close()
      }
    })
  }
}

export type Services = ReturnType<typeof createServices>
