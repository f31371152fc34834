/**
 * The audit log. Entries are written by the other services in the same
 * transaction as the change they record; this service builds them and lists them.
 */
import type { Knex } from 'knex'
import { listLogsQuery } from '../../shared/contracts'
import type { EntityType, LogEntry, Page } from '../../shared/types'
import type { RowBuffer, WriteQueue } from '../db/write-queue'
import { countLogs, foldLogEntities, insertLogs, listLogs, LOG_COLUMNS, type LogRow } from '../repositories/logs.repository'
import type { Actor, Clock } from './context'
import { requirePermission } from './access'
import { offsetOf, toPage } from './pagination'
import { toIsoString } from './dates'
import { parseOrThrow } from './validation'

export type LogOperation = 'create' | 'read' | 'update' | 'delete' | 'regenerate' | 'authorize' | 'resend' | 'accept' | 'reveal' | 'expire' | 'rotate' | 'retire'

export interface LogInput {
  entityType: string
  entityId: string
  operation: LogOperation
  message: string
}

/** Every entity type a log entry can name (`GET /logs/entity-types`). */
export const ENTITY_TYPES: EntityType[] = [
  { display_name: 'Application', value: 'application' },
  { display_name: 'Bank account', value: 'bank' },
  { display_name: 'Card', value: 'card' },
  { display_name: 'Invitation', value: 'invitation' },
  { display_name: 'Encryption key', value: 'key' },
  { display_name: 'Member', value: 'member' },
  { display_name: 'Session', value: 'session' },
  { display_name: 'Tenant', value: 'tenant' },
  { display_name: 'Token', value: 'token' }
]

/** Builds the row recording that `actor` did something, at `now`. */
export function logRow(actor: Pick<Actor, 'id' | 'type' | 'tenantId'> | null, tenantId: string, input: LogInput, now: number): LogRow {
  return {
    tenant_id: tenantId,
    actor_id: actor?.id ?? null,
    actor_type: actor?.type ?? null,
    entity_type: input.entityType,
    entity_id: input.entityId,
    operation: input.operation,
    message: input.message,
    created_at: now
  }
}

/** Appends entries inside the caller's transaction. */
export async function recordLogs(trx: Knex.Transaction, rows: LogRow[]): Promise<void> {
  await insertLogs(trx, rows)
}

/** Queues entries for the write batch's multi-row insert (see WriteQueue.append). */
export function appendLogs(buffer: RowBuffer, rows: LogRow[]): void {
  buffer.insert('logs', LOG_COLUMNS, rows)
}

function toLogEntry(row: LogRow): LogEntry {
  const entry: LogEntry = {
    tenant_id: row.tenant_id,
    entity_type: row.entity_type,
    entity_id: row.entity_id,
    operation: row.operation,
    message: row.message,
    created_at: toIsoString(Number(row.created_at))
  }
  if (row.actor_id) entry.actor_id = row.actor_id
  if (row.actor_type) entry.actor_type = row.actor_type
  return entry
}

export class LogsService {
  constructor(
    private readonly deps: { reader: Knex; clock: Clock; writes: WriteQueue }
  ) {}

  /** Brings up to `limit` more entries into the entity index (the `index-logs` sweep). */
  foldEntityIndex(limit: number): Promise<number> {
    return this.deps.writes.run((trx) => foldLogEntities(trx, limit))
  }

  /** `GET /logs`: newest first, filtered by entity and a half-open date range. */
  async list(actor: Actor, query: unknown): Promise<Page<LogEntry>> {
    requirePermission(actor, 'log:read')
    const q = parseOrThrow(listLogsQuery, query)
    const filter = {
      tenantId: actor.tenantId,
      entityType: q.entity_type,
      entityId: q.entity_id,
      startDate: q.start_date,
      endDate: q.end_date
    }
    const [total, rows] = await Promise.all([
      countLogs(this.deps.reader, filter),
      listLogs(this.deps.reader, filter, q.size, offsetOf(q))
    ])
    return toPage(rows.map(toLogEntry), total, q)
  }

  /**
   * Records a change to the tenant's settings kept outside the database (the
   * desktop's SMTP configuration), with the person who made it as actor.
   */
  async recordSettingsChange(actor: Actor, message: string): Promise<void> {
    const now = this.deps.clock.now()
    const entry = logRow(actor, actor.tenantId, { entityType: 'tenant', entityId: actor.tenantId, operation: 'update', message }, now)
    await this.deps.writes.run((trx) => recordLogs(trx, [entry]))
  }

  /** `GET /logs/entity-types`. */
  entityTypes(actor: Actor): EntityType[] {
    requirePermission(actor, 'log:read')
    return ENTITY_TYPES
  }
}
