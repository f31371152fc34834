/**
 * Refused requests in the audit log: failed authentication (401) and refused
 * operations (403). A flood of them must not fill the disk, so they are
 * aggregated: one entry per status, reason, source address, actor and
 * operation in each minute, with a count, written when the minute ends and
 * when the service stops. What is recorded never holds the presented secret
 * (the reason names at most the key's type) nor caller text (the operation is
 * the matched route, not the path). An aggregated entry records the trace id
 * (`BT-TRACE-ID`) of the first request it counts. Nothing here runs for a
 * request that succeeds.
 */
import { toIsoString } from '../domain/dates'
import type { ServiceContext } from './service-context'
import { audit, type AuditActor, type AuditEvent } from './audit'

export interface Denial {
  status: 401 | 403
  /** Why, safe to store: never the presented secret. */
  reason: string
  /** The caller's network address. */
  source: string
  /** The route, such as `GET /tokens/:id`. */
  operation: string
  /** The authenticated caller (403). */
  actor?: AuditActor
  /** The request's trace id (`BT-TRACE-ID`). */
  traceId?: string
}

/** Distinct entries per minute; further refusals that minute share one entry per status. */
export const MAX_DENIAL_ENTRIES_PER_MINUTE = 100
const MINUTE = 60_000
const MAX_REASON_LENGTH = 200

interface Bucket {
  denial: Denial
  count: number
  first: number
  last: number
}

function overflow(status: Denial['status']): Denial {
  return { status, reason: 'more distinct refusals than one minute keeps apart', source: 'several addresses', operation: 'several operations' }
}

export class DenialsService {
  private minute = 0
  private buckets = new Map<string, Bucket>()
  private timer: NodeJS.Timeout | undefined

  /** @param tenantId the vault's tenant, which owns entries without an actor (401) */
  constructor(
    private readonly context: ServiceContext,
    private readonly tenantId: string
  ) {}

  /** Counts a refusal; its minute's entries are written when the minute ends. */
  record(denial: Denial): void {
    const now = this.context.clock.now()
    const minute = now - (now % MINUTE)
    if (minute !== this.minute) {
      this.flushInBackground()
      this.minute = minute
    }
    let key = [denial.status, denial.reason, denial.source, denial.actor?.id ?? '', denial.operation].join('\u0000')
    if (!this.buckets.has(key) && this.buckets.size >= MAX_DENIAL_ENTRIES_PER_MINUTE) {
      key = `overflow\u0000${denial.status}`
      denial = { ...overflow(denial.status), traceId: denial.traceId }
    }
    const bucket = this.buckets.get(key)
    if (bucket) {
      bucket.count++
      bucket.last = now
      return
    }
    this.buckets.set(key, { denial, count: 1, first: now, last: now })
    if (!this.timer) {
      this.timer = setTimeout(() => this.flushInBackground(), minute + MINUTE - now)
      this.timer.unref()
    }
  }

  /** Writes the entries counted so far; resolves once they are committed (graceful stop). */
  async flush(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.buckets.size === 0) return
    const events = [...this.buckets.values()].map((bucket) => this.toEvent(bucket))
    this.buckets = new Map()
    await audit(this.context.writes, this.context.clock.now(), events)
  }

  private flushInBackground(): void {
    this.flush().catch((error: { name?: string; code?: string }) =>
      this.context.logger.error({ err: { name: error.name, code: error.code } }, 'refused requests could not be logged')
    )
  }

  private toEvent({ denial, count, first, last }: Bucket): AuditEvent {
    const reason = denial.reason.length > MAX_REASON_LENGTH ? `${denial.reason.slice(0, MAX_REASON_LENGTH)}…` : denial.reason
    const times = count === 1 ? `at ${toIsoString(first)}` : `between ${toIsoString(first)} and ${toIsoString(last)}`
    const message = `${count} ${count === 1 ? 'request' : 'requests'} from ${denial.source} refused with ${denial.status} ${times}: ${reason}`
    const operation = denial.status === 401 ? ('unauthenticated' as const) : ('forbidden' as const)
    const tenantId = denial.actor?.tenantId ?? this.tenantId
    return { actor: denial.actor ?? null, tenantId, entityType: 'request', entityId: denial.operation, operation, message, at: first, count, traceId: denial.traceId }
  }
}
