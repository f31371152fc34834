/**
 * Webhooks (Basis Theory's `/webhooks`): at most five per tenant, each a URL
 * and the event types it wants. Registration takes any http(s) URL, as Basis
 * Theory does; where deliveries may actually go is decided when they are sent
 * (loopback and the allow-list, webhook-delivery.ts). Every change reloads the
 * in-memory subscriptions here and, on a team vault, on the other instances.
 */
import {
  MAX_WEBHOOKS_PER_TENANT,
  WEBHOOK_EVENT_TYPES,
  type ListWebhookDeliveriesQuery,
  type ListWebhooksQuery,
  type WebhookInput
} from '../../shared/contracts'
import type { z } from 'zod'
import type { webhook, webhookDelivery } from '../../shared/contracts'
import type { Page } from '../../shared/types'
import { newId } from '../crypto/random'
import { requirePermission } from '../domain/access'
import type { Actor } from '../domain/actor'
import { toIsoString } from '../domain/dates'
import { BusinessRuleError, NotFoundError } from '../domain/errors'
import { uuidPathId } from '../domain/ids'
import { offsetOf, toPage } from '../domain/pagination'
import { notifyChange } from '../storage/change-feed'
import type { Tx } from '../storage/connections'
import {
  countDeliveries,
  countWebhooks,
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listDeliveries,
  listWebhooks,
  lockTenantWebhooks,
  replaceWebhook,
  type DeliveryRecord,
  type WebhookRecord
} from '../storage/repositories/webhooks.repository'
import { audit } from './audit'
import type { ServiceContext } from './service-context'
import type { WebhookEvents } from './webhook-events'
import type { WebhookSigningKey } from './webhook-signing-key'

export type Webhook = z.infer<typeof webhook>
export type WebhookDeliveryView = z.infer<typeof webhookDelivery>

const ENTITY_TYPE = 'webhook'

function toWire(record: WebhookRecord): Webhook {
  const view: Webhook = {
    id: record.id,
    tenant_id: record.tenant_id,
    status: record.status,
    name: record.name,
    url: record.url,
    events: record.events,
    created_by: record.created_by,
    created_at: toIsoString(record.created_at)
  }
  if (record.notify_email !== null) view.notify_email = record.notify_email
  if (record.modified_by !== null) view.modified_by = record.modified_by
  if (record.modified_at !== null) view.modified_at = toIsoString(record.modified_at)
  return view
}

function toDeliveryView(record: DeliveryRecord): WebhookDeliveryView {
  const view: WebhookDeliveryView = {
    id: record.id,
    webhook_id: record.webhook_id,
    event_id: record.event_id,
    event_type: record.event_type,
    status: record.status,
    attempts: record.attempt_log.map((attempt) => ({ ...attempt, at: toIsoString(attempt.at) })),
    created_at: toIsoString(record.created_at)
  }
  if (record.status === 'pending') view.next_attempt_at = toIsoString(record.next_attempt_at)
  if (record.completed_at !== null) view.completed_at = toIsoString(record.completed_at)
  return view
}

export class WebhooksService {
  constructor(
    private readonly context: ServiceContext,
    private readonly events: WebhookEvents,
    private readonly signingKey: WebhookSigningKey,
    /** The vault's tenant, whose public key `GET /webhooks/signing-key` publishes. */
    private readonly vaultTenantId: string
  ) {}

  /** `GET /webhooks/event-types`: open to any authenticated caller, as Basis Theory's. */
  eventTypes(): string[] {
    return [...WEBHOOK_EVENT_TYPES]
  }

  /** `GET /webhooks/signing-key`: the PEM public key deliveries are signed with (no authentication). */
  signingPublicKey(): Promise<string> {
    return this.signingKey.publicKey(this.vaultTenantId)
  }

  /** `POST /webhooks`: needs `webhook:create`; a sixth webhook is a 422. */
  async create(actor: Actor, input: WebhookInput): Promise<Webhook> {
    requirePermission(actor, 'webhook:create')
    const now = this.context.clock.now()
    const record: WebhookRecord = {
      tenant_id: actor.tenantId,
      id: newId(),
      name: input.name,
      url: input.url,
      notify_email: input.notify_email ?? null,
      events: input.events,
      status: 'enabled',
      created_by: actor.id,
      created_at: now,
      modified_by: null,
      modified_at: null
    }
    await this.change(async (trx) => {
      await lockTenantWebhooks(trx, actor.tenantId)
      if ((await countWebhooks(trx, actor.tenantId)) >= MAX_WEBHOOKS_PER_TENANT) {
        throw new BusinessRuleError(`A tenant may have at most ${MAX_WEBHOOKS_PER_TENANT} webhooks; delete one first.`)
      }
      await insertWebhook(trx, record)
      audit(trx, now, [{ actor, entityType: ENTITY_TYPE, entityId: record.id, operation: 'create', message: `Webhook created (${record.events.join(', ')})` }])
    })
    return toWire(record)
  }

  /** `GET /webhooks`: needs `webhook:read`; oldest first. */
  async list(actor: Actor, query: ListWebhooksQuery): Promise<Page<Webhook>> {
    requirePermission(actor, 'webhook:read')
    const { reader } = this.context
    const [total, rows] = await Promise.all([countWebhooks(reader, actor.tenantId), listWebhooks(reader, actor.tenantId, query.size, offsetOf(query))])
    return toPage(rows.map(toWire), total, query)
  }

  /** `GET /webhooks/{id}`: needs `webhook:read`. */
  async get(actor: Actor, id: string): Promise<Webhook> {
    requirePermission(actor, 'webhook:read')
    return toWire(await this.findOr404(actor, id))
  }

  /** `PUT /webhooks/{id}`: needs `webhook:update`; replaces name, URL, notify e-mail and events. */
  async update(actor: Actor, id: string, input: WebhookInput): Promise<Webhook> {
    requirePermission(actor, 'webhook:update')
    const existing = await this.findOr404(actor, id)
    const now = this.context.clock.now()
    const record: WebhookRecord = {
      ...existing,
      name: input.name,
      url: input.url,
      notify_email: input.notify_email ?? null,
      events: input.events,
      modified_by: actor.id,
      modified_at: now
    }
    await this.change(async (trx) => {
      if (!(await replaceWebhook(trx, record))) throw new NotFoundError('Webhook')
      audit(trx, now, [{ actor, entityType: ENTITY_TYPE, entityId: record.id, operation: 'update', message: `Webhook updated (${record.events.join(', ')})` }])
    })
    return toWire(record)
  }

  /** `DELETE /webhooks/{id}`: needs `webhook:delete`; its pending deliveries and log go with it. */
  async delete(actor: Actor, id: string): Promise<void> {
    requirePermission(actor, 'webhook:delete')
    const webhookId = uuidPathId(id, 'Webhook')
    const now = this.context.clock.now()
    await this.change(async (trx) => {
      if (!(await deleteWebhook(trx, actor.tenantId, webhookId))) throw new NotFoundError('Webhook')
      audit(trx, now, [{ actor, entityType: ENTITY_TYPE, entityId: webhookId, operation: 'delete', message: 'Webhook deleted' }])
    })
  }

  /** `GET /webhooks/{id}/deliveries` (Tessera): needs `webhook:read`; newest first, each with its attempts. */
  async listDeliveries(actor: Actor, id: string, query: ListWebhookDeliveriesQuery): Promise<Page<WebhookDeliveryView>> {
    requirePermission(actor, 'webhook:read')
    const webhook = await this.findOr404(actor, id)
    const filter = { tenantId: actor.tenantId, webhookId: webhook.id, status: query.status }
    const { reader } = this.context
    const [total, rows] = await Promise.all([countDeliveries(reader, filter), listDeliveries(reader, filter, query.size, offsetOf(query))])
    return toPage(rows.map(toDeliveryView), total, query)
  }

  /** Runs a change of the webhook list, tells the other instances, and reloads the subscriptions once it committed. */
  private async change(work: (trx: Tx) => Promise<void>): Promise<void> {
    try {
      await this.context.writes.run(async (trx) => {
        await work(trx)
        await notifyChange(trx, { kind: 'webhook' })
      })
    } finally {
      await this.events.reload()
    }
  }

  private async findOr404(actor: Actor, id: string): Promise<WebhookRecord> {
    const record = await findWebhook(this.context.reader, actor.tenantId, uuidPathId(id, 'Webhook'))
    if (!record) throw new NotFoundError('Webhook')
    return record
  }
}
