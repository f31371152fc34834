/**
 * The audit log's one way in. An audited change writes its entries in the
 * same transaction as the change (`audit(tx, …)`, or `audit(rows, …)` in an
 * appended unit); an audited read, or a desktop action that changes no row,
 * writes them on their own with the next group commit (`audit(writes, …)`,
 * resolved once committed). The write queue seals every entry into the audit
 * chain (audit-chain.ts).
 *
 * A change made by a request holding a `BT-IDEMPOTENCY-KEY` also records, in
 * its transaction, that the request committed (idempotency.service.ts): what
 * keeps a retry from running it again when its response was lost.
 */
import type { Actor } from '../domain/actor'
import type { Tx } from '../storage/connections'
import { appendIdempotencyCommit } from '../storage/repositories/idempotency.repository'
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

/**
 * Who an entry names as actor, and the trace id of the REST request it acted through (none for the desktop, the CLI and the system),
 * and the idempotency key that request holds.
 */
export type AuditActor = Pick<Actor, 'id' | 'type' | 'tenantId' | 'traceId' | 'idempotencyKey'>

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
  if (into instanceof WriteQueue) return events.length ? into.append((rows) => appendLogEntries(rows, auditRows(now, events)), events.length) : Promise.resolve()
  if (events.length === 0) return
  const rows = bufferOf(into)
  appendLogEntries(rows, auditRows(now, events))
  recordIdempotentCommits(rows, events)
}

/**
 * The entries of a change name the request's actor: one holding an idempotency key marks it as
 * committed with the change. A read in a change's transaction (a token returned by deduplication)
 * changed nothing, and marks nothing: that request may run again. Entries written on their own
 * (reads, above) never mark. One property read per entry for a request without a key.
 */
function recordIdempotentCommits(rows: RowBuffer, events: readonly AuditEvent[]): void {
  let recorded: AuditActor['idempotencyKey']
  for (const event of events) {
    const held = event.actor?.idempotencyKey
    if (held === undefined || held === recorded || event.operation === 'read') continue
    appendIdempotencyCommit(rows, held.reservation, held.requestHash, held.expiresAt)
    recorded = held
  }
}
