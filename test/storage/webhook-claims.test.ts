/**
 * A delivery worker's claim costs a probe per webhook, however many deliveries
 * one webhook has queued. A webhook whose receiver never answers piles up a
 * backlog of due deliveries (one per event, and events are cheap to make); each
 * claim for another webhook runs in a write transaction, holding the vault's
 * writer, so it must not read past that backlog. Both engines, each without
 * statistics, as a new vault is.
 */
import { randomUUID } from 'node:crypto'
import type { Knex } from 'knex'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../../src/main/storage/connections'
import { engineOf } from '../../src/main/storage/dialect'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { claimDueDelivery, hasDueDelivery, insertWebhook, queueDeliveries, releaseWebhookLease, type DeliveryRecord } from '../../src/main/storage/repositories/webhooks.repository'
import { WriteQueue } from '../../src/main/storage/write-queue'
import { statementsRun, usePostgresDatabase, useTemporaryDatabase, type Statement } from '../helpers/database'

/** Due deliveries of the webhook whose receiver never answers. */
const BACKLOG = 3000
const NOW = 1_000_000
const LEASE = NOW + 90_000
const QUEUE_INDEX = 'webhook_deliveries_status_webhook_id_next_attempt_at_index'

describe.each([
  ['SQLite', () => useTemporaryDatabase('webhook-claims')],
  ['PostgreSQL', () => usePostgresDatabase()]
])('claiming webhook deliveries on %s', { timeout: 60_000 }, (_engine, useDatabase) => {
  const database = useDatabase()
  const tenantId = randomUUID()
  // The stalled webhook's id sorts between the others', so neither end of an index walk avoids its backlog.
  const [first, stalled, last] = ['10000000', '50000000', '90000000'].map((prefix) => `${prefix}${randomUUID().slice(8)}`)
  let writes: WriteQueue

  beforeAll(async () => {
    writes = new WriteQueue(database.db.writer)
  })

  function delivery(webhookId: string, nextAttemptAt: number): DeliveryRecord {
    const event = { id: randomUUID(), type: 'token.created' }
    return {
      id: randomUUID(),
      tenant_id: tenantId,
      webhook_id: webhookId,
      event_id: event.id,
      event_type: event.type,
      event,
      status: 'pending',
      attempts: 0,
      next_attempt_at: nextAttemptAt,
      attempt_log: [],
      created_at: nextAttemptAt,
      completed_at: null
    }
  }

  /** `first` and `last` have two due deliveries each, `stalled` the backlog, older than all of them. */
  async function seed(): Promise<DeliveryRecord[]> {
    const writer = database.db.writer
    if ((await sql(writer)('tenants').where({ id: tenantId }).first()) === undefined) {
      await insertTenant(writer, { id: tenantId, name: 'T', owner_user_id: null, created_at: 0 })
      for (const id of [first, stalled, last])
        await writes.run((tx) =>
          insertWebhook(tx, { tenant_id: tenantId, id, name: id, url: 'http://127.0.0.1/', notify_email: null, events: ['token.created'], status: 'enabled', created_by: 'test', created_at: 0, modified_by: null, modified_at: null })
        )
    }
    await sql(writer)('webhook_deliveries').delete()
    await sql(writer)('webhooks').update({ attempt_until: null })
    const backlog = Array.from({ length: BACKLOG }, (_, i) => delivery(stalled, i))
    const others = [delivery(last, NOW - 20), delivery(first, NOW - 10), delivery(last, NOW - 5), delivery(first, NOW)]
    for (let i = 0; i < backlog.length; i += 500) await writes.append((rows) => queueDeliveries(rows, backlog.slice(i, i + 500)))
    await writes.append((rows) => queueDeliveries(rows, others))
    return others
  }

  it("claims the other webhooks' deliveries, each webhook's oldest first, past the backlog of one in flight", async () => {
    const [last1, first1, last2, first2] = await seed()
    const claim = (inFlight: string[]) => writes.run((tx) => claimDueDelivery(tx, NOW, LEASE, inFlight))
    const release = (claimed: DeliveryRecord | undefined) => writes.run((tx) => releaseWebhookLease(tx, claimed!))
    expect(await hasDueDelivery(database.db.reader, NOW, [stalled])).toBe(true)
    const claimedLast1 = await claim([stalled])
    expect(claimedLast1?.id).toBe(last1.id)
    // A claim leases the webhook: its next delivery waits until that attempt ends, whoever asks.
    const claimedFirst1 = await claim([stalled])
    expect(claimedFirst1?.id).toBe(first1.id)
    expect(await hasDueDelivery(database.db.reader, NOW, [stalled])).toBe(false)
    expect(await claim([stalled])).toBeUndefined()
    await release(claimedLast1)
    expect((await claim([stalled]))?.id).toBe(last2.id)
    await release(claimedFirst1)
    expect((await claim([stalled]))?.id).toBe(first2.id)
    expect(await hasDueDelivery(database.db.reader, NOW, [stalled])).toBe(false)
    expect(await claim([stalled])).toBeUndefined()
    // Nothing in flight: the backlog's oldest.
    expect((await claim([]))?.next_attempt_at).toBe(LEASE)
    expect(await sql(database.db.reader)('webhook_deliveries').where({ webhook_id: stalled, next_attempt_at: LEASE }).pluck('created_at')).toEqual([0])
  })

  it('reads a bounded number of deliveries to claim one, however long the backlog of a webhook in flight', async () => {
    await seed()
    const writer = sql(database.db.writer)
    const reader = sql(database.db.reader)
    const looks = await statementsOf(reader, () => hasDueDelivery(database.db.reader, NOW, [stalled]))
    const claims = await statementsOf(writer, () => writes.run((tx) => claimDueDelivery(tx, NOW, LEASE, [stalled])))
    // The claim: its candidate, then (once its webhook is leased) the delivery itself.
    expect([looks.length, claims.length]).toEqual([1, 2])
    for (const statement of [...looks, ...claims]) await expectBoundedReads(writer, statement)
  })

  async function expectBoundedReads(writer: Knex, statement: Statement): Promise<void> {
    if (engineOf(writer) === 'sqlite') {
      const steps: string[] = (await writer.raw(`EXPLAIN QUERY PLAN ${statement.sql}`, statement.bindings)).map((row: { detail: string }) => row.detail)
      const deliveryReads = steps.filter((step) => /^(SEARCH|SCAN) (webhook_deliveries|d) /.test(step))
      expect(deliveryReads.length).toBeGreaterThan(0)
      // Each read of the deliveries is a probe: of the queue index, or by id; none walks the status index or the table.
      for (const step of deliveryReads) expect(step, statement.sql).toMatch(new RegExp(`^SEARCH \\w+ USING (COVERING )?INDEX (${QUEUE_INDEX} \\(status=\\?|sqlite_autoindex_webhook_deliveries_1 \\(id=\\?\\))`))
    } else {
      // Run it again (a claim takes another due delivery) and count the rows each step read.
      const [{ 'QUERY PLAN': [plan] }] = (await writer.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql.replace(/\$\d+/g, '?')}`, statement.bindings)).rows
      expect(deliveryRowsRead(plan.Plan), statement.sql).toBeLessThan(50)
    }
  }
})


interface PlanNode {
  'Relation Name'?: string
  'Actual Rows': number
  'Actual Loops': number
  'Rows Removed by Filter'?: number
  'Rows Removed by Index Recheck'?: number
  Plans?: PlanNode[]
}

/** Rows an executed PostgreSQL plan read from `webhook_deliveries`: those its scans returned and those they filtered out. */
function deliveryRowsRead(node: PlanNode): number {
  const own =
    node['Relation Name'] === 'webhook_deliveries'
      ? node['Actual Rows'] * node['Actual Loops'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)
      : 0
  return own + (node.Plans ?? []).reduce((sum, child) => sum + deliveryRowsRead(child), 0)
}

/** The statements on `webhook_deliveries` that `work` runs on `db`. */
async function statementsOf(db: Knex, work: () => Promise<unknown>): Promise<Statement[]> {
  return (await statementsRun(db, work)).filter((query) => query.sql.includes('webhook_deliveries'))
}
