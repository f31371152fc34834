/**
 * The audit log's entity filter on PostgreSQL: an entity's entries are read
 * through `logs`' own index (tenant, type, entity, created_at, seq), written
 * with each entry, so an entry is found the moment it commits, and a page or a
 * count reads that entity's range alone. A new team vault's tables have no
 * statistics yet; the plans must hold without them.
 */
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../../src/main/storage/connections'
import { countLogs, countLogsByPeriod, listLogs, type LogFilter } from '../../src/main/storage/repositories/logs.repository'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { tenantKeys } from '../../src/main/storage/tenant-keys'
import { statementsRun, usePostgresDatabase } from '../helpers/database'

const ENTRIES = 30_000
/** Entities the entries go to in turn; token-0 also has entries of another type. */
const ENTITIES = 300

describe("The audit log's entity index on PostgreSQL", { timeout: 60_000 }, () => {
  const database = usePostgresDatabase()
  const tenantId = randomUUID()
  const db = () => sql(database.db.writer)

  beforeAll(async () => {
    await insertTenant(database.db.writer, { id: tenantId, name: 'T', owner_user_id: null, created_at: 0 })
    const key = tenantKeys(database.db.writer).keyOf(tenantId)
    // Entry n is of entity token-(n % ENTITIES), created at n seconds, except that every tenth is dated an hour
    // earlier (an aggregated entry dates from its first event; a clock can be set back): chain order is not time order.
    await db().raw(
      `INSERT INTO logs (tenant_key, entity_type, entity_id, operation, message, created_at)
       SELECT ?, CASE WHEN n % 7 = 0 THEN 'card' ELSE 'token' END, 'token-' || (n % ${ENTITIES}), 'read', 'Token retrieved',
              n * 1000 - CASE WHEN n % 10 = 0 THEN 3600000 ELSE 0 END
         FROM generate_series(1, ${ENTRIES}) AS n`,
      [key]
    )
    await db().raw(`INSERT INTO log_counts (tenant_key, entity_type, count) SELECT tenant_key, entity_type, count(*) FROM logs GROUP BY 1, 2`)
  })

  /** Every entry of the filter, in the list's order, straight from the table. */
  async function expectedSeqs(filter: LogFilter): Promise<number[]> {
    const query = db()('logs').where({ entity_id: filter.entityId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'seq', order: 'desc' }])
    if (filter.entityType) query.andWhere('entity_type', filter.entityType)
    if (filter.startDate !== undefined) query.andWhere('created_at', '>=', filter.startDate)
    return (await query.pluck('seq')).map(Number)
  }

  /** The plans of every statement `work` runs on the read pool, as EXPLAIN's text. */
  async function plansOf(work: () => Promise<unknown>): Promise<string[]> {
    const reader = sql(database.db.reader)
    const plans: string[] = []
    // The event gives PostgreSQL's numbered placeholders, bound in order.
    for (const query of await statementsRun(reader, work)) plans.push((await reader.raw(`EXPLAIN ${query.sql.replace(/\$\d+/g, '?')}`, query.bindings)).rows.map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN']).join('\n'))
    return plans
  }

  it('finds every entry of an entity, in list order, with or without its type and dates', async () => {
    for (const filter of [
      { tenantId, entityType: 'token', entityId: 'token-0' },
      { tenantId, entityId: 'token-0' },
      { tenantId, entityType: 'card', entityId: 'token-7' },
      { tenantId, entityId: 'token-10', startDate: 20_000_000 }
    ]) {
      const expected = await expectedSeqs(filter)
      expect(expected.length).toBeGreaterThan(5)
      const pages = [...(await listLogs(database.db.reader, filter, 40, 0)), ...(await listLogs(database.db.reader, filter, 1_000, 40))]
      expect(pages.map((entry) => entry.seq ?? -1)).toEqual(expected)
      expect(await countLogs(database.db.reader, filter)).toBe(expected.length)
    }
  })

  it('reads an entity range through the index, never the whole log, and never sorts all it matches', async () => {
    const plans = await plansOf(async () => {
      await listLogs(database.db.reader, { tenantId, entityType: 'token', entityId: 'token-3' }, 20, 0)
      await listLogs(database.db.reader, { tenantId, entityId: 'token-3' }, 20, 0)
      await countLogs(database.db.reader, { tenantId, entityId: 'token-3' })
      await countLogsByPeriod(database.db.reader, { tenantId, entityId: 'token-3' }, [[0, 10_000_000], [10_000_000, 40_000_000]])
    })
    if (process.env.SHOW_PLANS) console.log(plans.join('\n\n'))
    const entityPlans = plans.filter((plan) => plan.includes('logs_entity_index'))
    expect(entityPlans.length).toBeGreaterThanOrEqual(5)
    for (const plan of plans) {
      expect(plan).not.toMatch(/Seq Scan on logs/)
      expect(plan).not.toMatch(/^\s*(->\s*)?Sort\b/m)
    }
  })

  it('finds an entry as soon as it commits', async () => {
    await db()('logs').insert({ tenant_key: tenantKeys(database.db.writer).keyOf(tenantId), entity_type: 'token', entity_id: 'fresh', operation: 'create', message: 'Token created', created_at: 1 })
    expect(await listLogs(database.db.reader, { tenantId, entityId: 'fresh' }, 10, 0)).toMatchObject([{ entity_id: 'fresh', operation: 'create' }])
  })
})
