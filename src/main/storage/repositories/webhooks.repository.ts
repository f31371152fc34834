/**
 * Webhooks and their deliveries (the outbox and delivery log). Deliveries are
 * queued through the write queue's row buffer, so an event costs its change no
 * extra statement; delivery attempts are claimed one instance at a time.
 */
import { sql, type Db, type Tx } from '../connections'
import { lockName, lockingRows, whereAmongKeys } from '../dialect'
import type { RowBuffer } from '../write-queue'

export interface WebhookRecord {
  tenant_id: string
  id: string
  name: string
  url: string
  notify_email: string | null
  events: string[]
  status: 'enabled' | 'disabled'
  created_by: string
  created_at: number
  modified_by: string | null
  modified_at: number | null
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'blocked'

export interface DeliveryAttemptRecord {
  at: number
  outcome: 'delivered' | 'failed' | 'blocked'
  status_code?: number
  duration_ms: number
  error?: string
}

export interface DeliveryRecord {
  id: string
  tenant_id: string
  webhook_id: string
  event_id: string
  event_type: string
  /** The event object, as it is sent. */
  event: Record<string, unknown>
  status: DeliveryStatus
  attempts: number
  next_attempt_at: number
  attempt_log: DeliveryAttemptRecord[]
  created_at: number
  completed_at: number | null
}

const WEBHOOKS = 'webhooks'
const DELIVERIES = 'webhook_deliveries'

type WebhookRow = Omit<WebhookRecord, 'events'> & { events: string }
type DeliveryRow = Omit<DeliveryRecord, 'event' | 'attempt_log'> & { event: string; attempt_log: string }

const nullableNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value))

function webhookFromRow({ attempt_until: _lease, ...row }: WebhookRow & { attempt_until?: unknown }): WebhookRecord {
  return { ...row, events: JSON.parse(row.events), created_at: Number(row.created_at), modified_at: nullableNumber(row.modified_at) }
}

function deliveryFromRow(row: DeliveryRow): DeliveryRecord {
  return {
    ...row,
    event: JSON.parse(row.event),
    attempt_log: JSON.parse(row.attempt_log),
    attempts: Number(row.attempts),
    next_attempt_at: Number(row.next_attempt_at),
    created_at: Number(row.created_at),
    completed_at: nullableNumber(row.completed_at)
  }
}

const toWebhookRow = (webhook: WebhookRecord): WebhookRow => ({ ...webhook, events: JSON.stringify(webhook.events) })

/** Holds, until the transaction ends, the tenant's webhook list: its count is checked and changed by one instance at a time. */
export async function lockTenantWebhooks(tx: Tx, tenantId: string): Promise<void> {
  await lockName(sql(tx), 'webhooks', tenantId)
}

export async function countWebhooks(db: Db, tenantId: string): Promise<number> {
  const row = await sql(db)(WEBHOOKS).where({ tenant_id: tenantId }).count({ count: '*' }).first()
  return Number(row?.count ?? 0)
}

export async function insertWebhook(tx: Tx, webhook: WebhookRecord): Promise<void> {
  await sql(tx)(WEBHOOKS).insert(toWebhookRow(webhook))
}

/** Replaces the webhook's fields; false when it does not exist. */
export async function replaceWebhook(tx: Tx, webhook: WebhookRecord): Promise<boolean> {
  const { tenant_id, id, ...fields } = toWebhookRow(webhook)
  return (await sql(tx)(WEBHOOKS).where({ tenant_id, id }).update(fields)) > 0
}

/** Deletes the webhook and its deliveries (the log goes with it); false when it did not exist. */
export async function deleteWebhook(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const deleted = await sql(tx)(WEBHOOKS).where({ tenant_id: tenantId, id }).delete()
  if (deleted === 0) return false
  await sql(tx)(DELIVERIES).where({ tenant_id: tenantId, webhook_id: id }).delete()
  return true
}

export async function findWebhook(db: Db, tenantId: string, id: string): Promise<WebhookRecord | undefined> {
  const row: WebhookRow | undefined = await sql(db)(WEBHOOKS).where({ tenant_id: tenantId, id }).first()
  return row && webhookFromRow(row)
}

/** A tenant's webhooks, oldest first. */
export async function listWebhooks(db: Db, tenantId: string, limit: number, offset: number): Promise<WebhookRecord[]> {
  const rows: WebhookRow[] = await sql(db)(WEBHOOKS).where({ tenant_id: tenantId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(limit).offset(offset)
  return rows.map(webhookFromRow)
}

/** Every enabled webhook of every tenant: the subscriptions the event emitter keeps in memory. */
export async function listEnabledWebhooks(db: Db): Promise<Pick<WebhookRecord, 'tenant_id' | 'id' | 'events'>[]> {
  const rows: Pick<WebhookRow, 'tenant_id' | 'id' | 'events'>[] = await sql(db)(WEBHOOKS).select('tenant_id', 'id', 'events').where({ status: 'enabled' })
  return rows.map((row) => ({ ...row, events: JSON.parse(row.events) }))
}

const DELIVERY_COLUMNS = ['id', 'tenant_id', 'webhook_id', 'event_id', 'event_type', 'event', 'status', 'attempts', 'next_attempt_at', 'attempt_log', 'created_at'] as const

/** Queues deliveries with the change they announce (written by the batch's multi-row insert). */
export function queueDeliveries(rows: RowBuffer, deliveries: readonly DeliveryRecord[]): void {
  rows.insert(
    DELIVERIES,
    DELIVERY_COLUMNS,
    deliveries.map((delivery) => ({ ...delivery, event: JSON.stringify(delivery.event), attempt_log: JSON.stringify(delivery.attempt_log) }))
  )
}

const PENDING_WEBHOOKS = 'pending_webhooks'

/**
 * `pending_webhooks (webhook_id)`: the webhooks with a pending delivery, each once, by a walk of the
 * (status, webhook_id, next_attempt_at) index that jumps from one webhook to the next (a skip scan,
 * which neither engine does by itself): a probe per webhook however many deliveries one has queued.
 * Not the webhooks table: a delivery queued through a stale subscription may outlive its webhook.
 */
const pendingWebhooks = (db: Db) =>
  sql(db).raw(`select (select webhook_id from ${DELIVERIES} where status = 'pending' order by webhook_id limit 1)
    union all
    select (select webhook_id from ${DELIVERIES} where status = 'pending' and webhook_id > p.webhook_id order by webhook_id limit 1)
      from ${PENDING_WEBHOOKS} p where p.webhook_id is not null`)

/**
 * The pending deliveries due at `now`, oldest due first, but those of `exceptWebhooks` (ids). Only each
 * webhook's oldest due delivery is a candidate (one index probe per webhook), so a claim never walks
 * past the backlog of a webhook in flight: its writer turn costs the same however long that is.
 */
function dueDeliveries(db: Db, now: number, exceptWebhooks: readonly string[]) {
  const knex = sql(db)
  const oldestDue = knex(DELIVERIES)
    .select('id')
    .where('status', 'pending')
    .andWhere('webhook_id', knex.ref('p.webhook_id'))
    .andWhere('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(1)
  const eachOldestDue = knex.withRecursive(PENDING_WEBHOOKS, ['webhook_id'], pendingWebhooks(db)).select(oldestDue.as('id')).from({ p: PENDING_WEBHOOKS })
  if (exceptWebhooks.length > 0) eachOldestDue.whereNotIn('p.webhook_id', exceptWebhooks)
  const leasedWebhook = knex(WEBHOOKS)
    .select(knex.raw('1'))
    .whereRaw(`${WEBHOOKS}.tenant_id = ${DELIVERIES}.tenant_id and ${WEBHOOKS}.id = ${DELIVERIES}.webhook_id`)
    .andWhere('attempt_until', '>', now)
  return whereAmongKeys(knex, knex(DELIVERIES).select('id', 'tenant_id', 'webhook_id'), 'id', eachOldestDue)
    .whereNotExists(leasedWebhook)
    .orderBy('next_attempt_at')
}

/** Whether any delivery of a webhook but `exceptWebhooks` is due at `now`: a read, so an idle poll takes no write turn. */
export async function hasDueDelivery(db: Db, now: number, exceptWebhooks: readonly string[] = []): Promise<boolean> {
  return (await dueDeliveries(db, now, exceptWebhooks).first()) !== undefined
}

/** Webhooks whose leases a claim may find taken meanwhile (another instance's claim) before it gives up until the next pass. */
const CLAIM_TRIES = 4

/**
 * Takes the oldest delivery due at `now` of a webhook with no attempt in flight (this worker's
 * `exceptWebhooks`, and any other worker's lease) for one attempt: leases its webhook and pushes
 * the delivery's `next_attempt_at` to `leaseUntil`, both until `leaseUntil` (a crash mid-attempt
 * lets them be taken again then). Instances sharing the database skip one another's claims and
 * leases, so a webhook has one attempt in flight across them all; `releaseWebhookLease` ends it.
 */
export async function claimDueDelivery(tx: Tx, now: number, leaseUntil: number, exceptWebhooks: readonly string[] = []): Promise<DeliveryRecord | undefined> {
  const skipped = [...exceptWebhooks]
  for (let tries = 0; tries < CLAIM_TRIES; tries++) {
    const candidate: Pick<DeliveryRow, 'id' | 'tenant_id' | 'webhook_id'> | undefined = await dueDeliveries(tx, now, skipped).first()
    if (!candidate) return undefined
    if (await leaseWebhook(tx, candidate, now, leaseUntil)) {
      const claimed = await claimDelivery(tx, candidate.id, now, leaseUntil)
      if (claimed) return claimed
      await releaseWebhookLease(tx, { tenant_id: candidate.tenant_id, webhook_id: candidate.webhook_id, next_attempt_at: leaseUntil })
    }
    skipped.push(candidate.webhook_id)
  }
  return undefined
}

/**
 * Leases the delivery's webhook until `leaseUntil` unless another worker holds it (or is taking
 * it: its row is locked). A delivery whose webhook is gone (deleted while its event was queued)
 * needs no lease: its attempt records it failed.
 */
async function leaseWebhook(tx: Tx, delivery: Pick<DeliveryRow, 'tenant_id' | 'webhook_id'>, now: number, leaseUntil: number): Promise<boolean> {
  const db = sql(tx)
  const key = { tenant_id: delivery.tenant_id, id: delivery.webhook_id }
  const free = db(WEBHOOKS)
    .select('id')
    .where(key)
    .andWhere((lease) => lease.whereNull('attempt_until').orWhere('attempt_until', '<=', now))
  const leased = await db(WEBHOOKS).where(key).whereIn('id', lockingRows(db, free, { skipLocked: true })).update({ attempt_until: leaseUntil })
  return leased > 0 || (await db(WEBHOOKS).select('id').where(key).first()) === undefined
}

/** Pushes the delivery's `next_attempt_at` to `leaseUntil` if it is still due and no other worker is claiming it. */
async function claimDelivery(tx: Tx, id: string, now: number, leaseUntil: number): Promise<DeliveryRecord | undefined> {
  const db = sql(tx)
  const [row] = await db(DELIVERIES)
    .where('id', lockingRows(db, db(DELIVERIES).select('id').where({ id }), { skipLocked: true }))
    .andWhere('status', 'pending')
    .andWhere('next_attempt_at', '<=', now)
    .update({ next_attempt_at: leaseUntil })
    .returning('*')
  return row && deliveryFromRow(row as DeliveryRow)
}

/** Ends the lease a claim of `delivery` took on its webhook (its claimed `next_attempt_at`), unless another worker has taken it since. */
export async function releaseWebhookLease(tx: Tx, delivery: Pick<DeliveryRecord, 'tenant_id' | 'webhook_id' | 'next_attempt_at'>): Promise<void> {
  await sql(tx)(WEBHOOKS).where({ tenant_id: delivery.tenant_id, id: delivery.webhook_id, attempt_until: delivery.next_attempt_at }).update({ attempt_until: null })
}

const FINISHED: readonly DeliveryStatus[] = ['delivered', 'failed', 'blocked']

/**
 * Deletes up to `limit` deliveries that finished (delivered, failed or blocked) before `before`; how many.
 * A finished delivery's `next_attempt_at` is its completion time, so the status index finds them oldest first.
 */
export async function deleteFinishedDeliveries(tx: Tx, before: number, limit: number): Promise<number> {
  const db = sql(tx)
  const finished = db(DELIVERIES).select('id').whereIn('status', FINISHED).andWhere('next_attempt_at', '<', before).andWhere('completed_at', '<', before).limit(limit)
  return db(DELIVERIES).whereIn('id', finished).delete()
}

/** Records an attempt's result: the new state and the whole log. */
export async function recordDeliveryAttempt(
  db: Db,
  id: string,
  changes: Pick<DeliveryRecord, 'status' | 'attempts' | 'next_attempt_at' | 'attempt_log' | 'completed_at'>
): Promise<void> {
  await sql(db)(DELIVERIES)
    .where({ id })
    .update({ ...changes, attempt_log: JSON.stringify(changes.attempt_log) })
}

export interface DeliveryFilter {
  tenantId: string
  webhookId: string
  status?: DeliveryStatus
}

function deliveriesOf(db: Db, filter: DeliveryFilter) {
  const query = sql(db)(DELIVERIES).where({ tenant_id: filter.tenantId, webhook_id: filter.webhookId })
  return filter.status ? query.andWhere('status', filter.status) : query
}

export async function countDeliveries(db: Db, filter: DeliveryFilter): Promise<number> {
  const row = await deliveriesOf(db, filter).count({ count: '*' }).first()
  return Number(row?.count ?? 0)
}

/** A webhook's deliveries, newest first. */
export async function listDeliveries(db: Db, filter: DeliveryFilter, limit: number, offset: number): Promise<DeliveryRecord[]> {
  const rows: DeliveryRow[] = await deliveriesOf(db, filter)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'asc' }])
    .limit(limit)
    .offset(offset)
  return rows.map(deliveryFromRow)
}
