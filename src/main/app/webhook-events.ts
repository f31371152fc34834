/**
 * Webhook events leave with the change they announce: `emit` queues one
 * delivery per subscribed webhook in the change's own transaction (or appended
 * unit), so an event exists if and only if its change committed, and waits in
 * the `webhook_deliveries` outbox until a delivery worker sends it.
 *
 * Which webhooks listen to what is held in memory (every enabled webhook's
 * event types), so emitting for a tenant that subscribed to nothing costs a map
 * lookup: no query on the token hot paths. The set is reloaded after a webhook
 * changes here, when another instance of a team vault announces a change
 * (change feed kind `webhook`), and periodically there as a backstop.
 */
import type { WebhookEventType } from '../../shared/contracts'
import { newId } from '../crypto/random'
import { toIsoString } from '../domain/dates'
import type { EventActor, WebhookEvent } from '../domain/webhook-events'
import type { Reader, Tx } from '../storage/connections'
import { listEnabledWebhooks, queueDeliveries, type DeliveryRecord } from '../storage/repositories/webhooks.repository'
import { bufferOf, type RowBuffer } from '../storage/write-queue'

/** Who caused an event, as services hold it: an actor (its request's trace id included) or null for the system. */
export type EventCause = { id: string; type: string; tenantId: string; traceId?: string } | null

export interface EmittedEvent {
  tenantId: string
  type: WebhookEventType
  cause: EventCause
  /** The entity: never token data, never a key. */
  data: Record<string, unknown>
}

export class WebhookEvents {
  /** tenant id → event type → ids of the enabled webhooks subscribed to it. */
  private subscriptions = new Map<string, Map<string, string[]>>()
  private reloading: Promise<void> | undefined
  private reloadAgain = false
  private listeners: Array<() => void> = []

  constructor(private readonly reader: Reader) {}

  /** Whether any webhook subscribes to anything (the delivery worker polls only then). */
  get anySubscribed(): boolean {
    return this.subscriptions.size > 0
  }

  /** Whether any enabled webhook of `tenantId` subscribes to `type`: one map lookup, so callers build an event's data only when it will be sent. */
  subscribed(tenantId: string, type: WebhookEventType): boolean {
    return (this.subscriptions.get(tenantId)?.get(type)?.length ?? 0) > 0
  }

  /** Calls `listener` after events were queued (once their transaction has had time to commit, it looks). */
  onEmitted(listener: () => void): void {
    this.listeners.push(listener)
  }

  /** Reads the subscriptions afresh; calls during a reload run one more reload after it. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true
      return this.reloading
    }
    this.reloading = (async () => {
      do {
        this.reloadAgain = false
        const rows = await listEnabledWebhooks(this.reader)
        const next = new Map<string, Map<string, string[]>>()
        for (const row of rows) {
          const byType = next.get(row.tenant_id) ?? new Map<string, string[]>()
          next.set(row.tenant_id, byType)
          for (const type of row.events) byType.set(type, [...(byType.get(type) ?? []), row.id])
        }
        this.subscriptions = next
      } while (this.reloadAgain)
    })().finally(() => {
      this.reloading = undefined
    })
    return this.reloading
  }

  /** Queues `events` for their subscribers in the transaction (or appended unit) of their change. */
  emit(into: Tx | RowBuffer, now: number, events: readonly EmittedEvent[]): void {
    const deliveries: DeliveryRecord[] = []
    for (const emitted of events) {
      const webhookIds = this.subscriptions.get(emitted.tenantId)?.get(emitted.type)
      if (!webhookIds?.length) continue
      const event = toEvent(emitted, now)
      for (const webhookId of webhookIds) deliveries.push(pendingDelivery(webhookId, event, now))
    }
    if (deliveries.length === 0) return
    queueDeliveries(bufferOf(into), deliveries)
    for (const listener of this.listeners) listener()
  }
}

function toEvent({ tenantId, type, cause, data }: EmittedEvent, now: number): WebhookEvent {
  const actor: EventActor | null = cause && { id: cause.id, type: cause.type }
  return { id: newId(), type, timestamp: toIsoString(now), tenant_id: tenantId, trace_id: cause?.traceId ?? null, data: { ...data, actor } }
}

function pendingDelivery(webhookId: string, event: WebhookEvent, now: number): DeliveryRecord {
  return {
    id: newId(),
    tenant_id: event.tenant_id,
    webhook_id: webhookId,
    event_id: event.id,
    event_type: event.type,
    event: event as unknown as Record<string, unknown>,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    attempt_log: [],
    created_at: now,
    completed_at: null
  }
}

/** Emits one event of `tenantId` (the cause's tenant unless given) through the context's emitter, if it has one. */
export function emitEvent(
  context: { webhookEvents?: WebhookEvents },
  into: Tx | RowBuffer,
  now: number,
  type: WebhookEventType,
  cause: EventCause,
  data: Record<string, unknown>,
  tenantId = cause?.tenantId
): void {
  if (!context.webhookEvents || tenantId === undefined) return
  context.webhookEvents.emit(into, now, [{ tenantId, type, cause, data }])
}
