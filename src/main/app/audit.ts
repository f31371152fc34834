/**
 * The audit log's one way in. An audited change writes its entries in the
 * same transaction as the change (`audit(tx, …)`, or `audit(rows, …)` in an
 * appended unit); an audited read, or a desktop action that changes no row,
 * writes them on their own with the next group commit (`audit(writes, …)`,
 * resolved once committed). The write queue seals every entry into the audit
 * chain (audit-chain.ts).
 */
import type { Actor } from '../domain/actor'
import type { Tx } from '../storage/connections'
import { appendLogEntries, type LogRow } from '../storage/repositories/logs.repository'
import { bufferOf, WriteQueue, type RowBuffer } from '../storage/write-queue'

export type AuditOperation =
  | 'create'
  | 'read'
  | 'update'
  | 'delete'
  | 'regenerate'
  | 'authorize'
  | 'resend'
  | 'accept'
  | 'reveal'
  | 'expire'
  | 'export'
  | 'lock'
  | 'unlock'
  | 'unauthenticated'
  | 'forbidden'
  | 'rotate'
  | 'retire'
  | 'archive'

/** Who an entry names as actor, and the trace id of the REST request it acted through (none for the desktop, the CLI and the system). */
export type AuditActor = Pick<Actor, 'id' | 'type' | 'tenantId' | 'traceId'>

/** What happened to which entity. */
export interface AuditInput {
  entityType: string
  entityId: string
  operation: AuditOperation
  message: string
}

/** One audit entry to write. */
export interface AuditEvent extends AuditInput {
  /** Who did it; null for the system (expiry sweeps, background passes). */
  actor: AuditActor | null
  /** The tenant the entry belongs to: the actor's unless given (an entry without an actor must give it). */
  tenantId?: string
  /** How many events an aggregated entry stands for (refused requests). */
  count?: number
  /** When it happened, if not at the `now` it is written with (an aggregated entry dates from its first event). */
  at?: number
  /** The REST request's trace id: the actor's unless given (a refused request has no actor). */
  traceId?: string
}

/** The stored form of `events`, all at `now` (unsealed: the write queue seals them). */
export function auditRows(now: number, events: readonly AuditEvent[]): LogRow[] {
  return events.map((event) => ({
    tenant_id: event.tenantId ?? event.actor!.tenantId,
    actor_id: event.actor?.id ?? null,
    actor_type: event.actor?.type ?? null,
    entity_type: event.entityType,
    entity_id: event.entityId,
    operation: event.operation,
    message: event.message,
    created_at: event.at ?? now,
    count: event.count ?? null,
    trace_id: event.traceId ?? event.actor?.traceId ?? null
  }))
}

/** Writes audit entries at `now`: with the change in `tx` or `rows`, or on their own through `writes`. */
export function audit(into: WriteQueue, now: number, events: readonly AuditEvent[]): Promise<void>
export function audit(into: Tx | RowBuffer, now: number, events: readonly AuditEvent[]): void
export function audit(into: WriteQueue | Tx | RowBuffer, now: number, events: readonly AuditEvent[]): Promise<void> | void {
  if (into instanceof WriteQueue) return events.length ? into.append((rows) => audit(rows, now, events), events.length) : Promise.resolve()
  if (events.length) appendLogEntries(bufferOf(into), auditRows(now, events))
}
