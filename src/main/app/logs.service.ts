/**
 * The audit log: listing it, the desktop's activity chart and export, and the
 * upkeep of its entity index. Entries are written by every service through
 * `audit()` (audit.ts); reading the log is itself logged.
 */
import type { ActivityPeriods, ListLogsQuery, LogFilters } from '../../shared/contracts'
import type { EntityType, LogEntry, Page } from '../../shared/types'
import { COUNTED_ITEMS_LIMIT } from '../../shared/pagination'
import { countLogs, countLogsByPeriod, foldLogEntities, listLogs, unfoldedLogCount, type LogFilter, type LogRow } from '../storage/repositories/logs.repository'
import { audit, type AuditActor, type AuditInput, type AuditOperation } from './audit'
import type { AuditChain } from './audit-chain'
import type { ServiceContext } from './service-context'
import type { Actor } from '../domain/actor'
import { requirePermission } from '../domain/access'
import { offsetOf, toPage } from '../domain/pagination'
import { toIsoString } from '../domain/dates'

/** Every entity type a log entry can name (`GET /logs/entity-types`). */
export const ENTITY_TYPES: EntityType[] = [
  { display_name: 'API request (refused)', value: 'request' },
  { display_name: 'Application', value: 'application' },
  { display_name: 'Audit log', value: 'log' },
  { display_name: 'Bank account', value: 'bank' },
  { display_name: 'Card', value: 'card' },
  { display_name: 'Desktop settings', value: 'settings' },
  { display_name: 'Invitation', value: 'invitation' },
  { display_name: 'Encryption key', value: 'key' },
  { display_name: 'Member', value: 'member' },
  { display_name: 'Session', value: 'session' },
  { display_name: 'Tenant', value: 'tenant' },
  { display_name: 'Token', value: 'token' },
  { display_name: 'Token intent', value: 'token-intent' },
  { display_name: 'Vault', value: 'vault' }
]

const KNOWN_ENTITY_TYPES = new Set(ENTITY_TYPES.map((type) => type.value))

/** The desktop's CSV export: at most this many entries. */
const MAX_EXPORT_ENTRIES = 10_000

/**
 * How a read of the log names its filters. The entity id a reader searched
 * for is caller text (someone may paste a card number into the search box),
 * so it is named, never copied; so is an entity type the vault does not know.
 */
function describeFilters(q: LogFilters): string {
  const parts: string[] = []
  if (q.entity_type !== undefined) parts.push(`entity type ${KNOWN_ENTITY_TYPES.has(q.entity_type) ? q.entity_type : '(unknown)'}`)
  if (q.entity_id !== undefined) parts.push('an entity id')
  if (q.start_date !== undefined) parts.push(`from ${toIsoString(q.start_date)}`)
  if (q.end_date !== undefined) parts.push(`before ${toIsoString(q.end_date)}`)
  return parts.length ? `, filtered by ${parts.join(', ')}` : ''
}

function logFilter(actor: Actor, q: LogFilters): LogFilter {
  return { tenantId: actor.tenantId, entityType: q.entity_type, entityId: q.entity_id, startDate: q.start_date, endDate: q.end_date }
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
  if (row.count !== null) entry.count = Number(row.count)
  if (row.trace_id) entry.trace_id = row.trace_id
  return entry
}

export class LogsService {
  constructor(
    private readonly context: ServiceContext,
    private readonly chain: AuditChain
  ) {}

  /**
   * Brings up to `limit` more entries into the entity index (the `index-logs`
   * sweep) and records the audit chain's checkpoint.
   */
  foldEntityIndex(limit: number): Promise<number> {
    return this.context.writes.run(async (trx) => {
      const folded = await foldLogEntities(trx, limit)
      await this.chain.checkpoint(trx)
      return folded
    }, limit)
  }

  /** How many entries the entity index has yet to take in (the `index-logs` sweep's backlog). */
  entityIndexBacklog(): Promise<number> {
    return unfoldedLogCount(this.context.reader)
  }

  /** Records the chain's checkpoint at once (when the vault closes). */
  checkpoint(): Promise<void> {
    return this.context.writes.run((trx) => this.chain.checkpoint(trx))
  }

  /**
   * Records what `actor` did outside any service's transaction (the desktop's
   * lock, unlock and settings); resolves once the entry is committed.
   */
  record(actor: AuditActor, input: AuditInput): Promise<void> {
    return audit(this.context.writes, this.context.clock.now(), [{ actor, ...input }])
  }

  /** `GET /logs`: newest first, filtered by entity and a half-open date range; the read is logged. */
  async list(actor: Actor, q: ListLogsQuery): Promise<Page<LogEntry>> {
    requirePermission(actor, 'log:read')
    const filter = logFilter(actor, q)
    const [total, rows] = await Promise.all([countLogs(this.context.reader, filter), listLogs(this.context.reader, filter, q.size, offsetOf(q))])
    await this.recordRead(actor, 'read', `Audit log listed: page ${q.page}, ${rows.length} of ${total > COUNTED_ITEMS_LIMIT ? `more than ${COUNTED_ITEMS_LIMIT}` : total} entries${describeFilters(q)}`)
    return toPage(rows.map(toLogEntry), total, q)
  }

  /** `GET /logs/entity-types`; the read is logged. */
  async listEntityTypes(actor: Actor): Promise<EntityType[]> {
    requirePermission(actor, 'log:read')
    await this.recordRead(actor, 'read', 'Audit log entity types listed')
    return ENTITY_TYPES
  }

  /** The desktop's activity chart: how many entries match the filters in each [start, end) period (epoch ms); logged once. */
  async activity(actor: Actor, q: LogFilters, periods: ActivityPeriods): Promise<number[]> {
    requirePermission(actor, 'log:read')
    const counts = await countLogsByPeriod(this.context.reader, logFilter(actor, q), periods)
    await this.recordRead(actor, 'read', `Audit log activity counted over ${periods.length} periods${describeFilters(q)}`)
    return counts
  }

  /** The desktop's CSV export: every entry matching the filters, newest first, up to 10,000; logged as one export. */
  async export(actor: Actor, q: LogFilters): Promise<LogEntry[]> {
    requirePermission(actor, 'log:read')
    const rows = await listLogs(this.context.reader, logFilter(actor, q), MAX_EXPORT_ENTRIES, 0)
    await this.recordRead(actor, 'export', `Audit log exported: ${rows.length} entries${describeFilters(q)}`)
    return rows.map(toLogEntry)
  }

  private recordRead(actor: Actor, operation: AuditOperation, message: string): Promise<void> {
    return this.record(actor, { entityType: 'log', entityId: actor.tenantId, operation, message })
  }
}
