/**
 * Every list answers in time proportional to its page, not to the vault. For each
 * list and count the repositories run, this captures the exact SQL (knex's query
 * event on the read pool), asks SQLite for its plan, and fails when a step reads a
 * whole table or a whole index, or sorts the whole matching set for ORDER BY.
 *
 * The database has no statistics (no ANALYZE), like a vault in use: the plans are
 * the ones SQLite picks in production.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { visibleTokens } from '../../src/main/domain/access'
import type { Actor } from '../../src/main/domain/actor'
import type { StoredToken } from '../../src/main/domain/token'
import { sql } from '../../src/main/storage/connections'
import { appendLogEntries, countLogs, countLogsByPeriod, foldLogEntities, listLogs, type LogFilter, type LogRow } from '../../src/main/storage/repositories/logs.repository'
import { appendTokens, findByFingerprint, findTokenPage, seekTokens, type TokenFilter, type TokenSeek } from '../../src/main/storage/repositories/tokens.repository'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { tenantKeys } from '../../src/main/storage/tenant-keys'
import { WriteQueue } from '../../src/main/storage/write-queue'
import { statementsRun, useTemporaryDatabase } from '../helpers/database'

/** Tables whose rows are one per tenant and kind: reading all of a tenant's is the point. */
const COUNTER_TABLES = new Set(['token_counts', 'log_counts', 'log_entity_index'])

const METADATA_INDEX = 'm USING PRIMARY KEY (tenant_key=? AND key=? AND value_folded=?)'
/** The metadata walk of a v2 list: the first page from the value's newest entry, a page after a cursor inside the value's range. */
const METADATA_WALK = 'm USING PRIMARY KEY (tenant_key=? AND key=? AND value_folded=?'
/** The tokens with containers of their own under a rule's container: one range of `token_containers`. */
const CONTAINER_RANGE = 'token_containers USING PRIMARY KEY (tenant_key=? AND container>? AND container<?)'
const SEARCH_INDEX = 's USING COVERING INDEX token_search_indexes_tenant_key_index_hash_created_at_token_id_index (tenant_key=? AND index_hash=?'
const ENTITY_INDEX = 'log_entities USING PRIMARY KEY (tenant_key=? AND entity_type=? AND entity_id=?'
/** The entries past the entity index's folded mark: a seq range the sweep keeps short. */
const LOG_TAIL = 'SEARCH logs USING INTEGER PRIMARY KEY (rowid>?)'

interface Plan {
  sql: string
  steps: string[]
  /** Each step's parent step, by index in `steps` (-1 for a top-level step). */
  parents: number[]
}

/** The steps of a plan that make it grow with the vault. */
function unboundedSteps(plan: Plan, { sortsBoundedSet = false } = {}): string[] {
  return plan.steps.filter((step, index) => {
    const scan = /^SCAN (\w+)( USING (COVERING )?INDEX)?/.exec(step)
    if (scan && !COUNTER_TABLES.has(scan[1]) && isTable(scan[1])) return true
    // Sorting ties of one created_at (the rowid tie-break) is bounded; sorting everything that matches is not.
    if (step === 'USE TEMP B-TREE FOR ORDER BY' && !sortsBoundedSet && !sortsLogTail(plan, index)) return true
    return false
  })
}

/** Whether the sort at `index` is the log tail's own, in its arm of a merge (a short seq range, not the entity's entries). */
function sortsLogTail({ steps, parents }: Plan, index: number): boolean {
  return steps.some((step, sibling) => step === LOG_TAIL && parents[sibling] === parents[index])
}

/** A counter query, or the count of tokens due for the expiry sweep (through the expiry index, their metadata by key). */
const readsCountersOnly = ({ steps }: Plan) =>
  steps.every(
    (step) =>
      !/^(SEARCH|SCAN) /.test(step) ||
      [...COUNTER_TABLES].some((table) => step.includes(` ${table} `)) ||
      step.includes('tokens_expires_at_index') ||
      step.includes('token_metadata EXISTS USING PRIMARY KEY (tenant_key=? AND key=? AND value_folded=? AND created_at=? AND token_id=?)')
  )

/** A token list's probe of how many entries one range of a metadata or container index holds, up to the count limit: how it chooses the index it walks. */
const probesOneRange = ({ sql, steps }: Plan) =>
  /limit \?\) as `matching`$/.test(sql) && steps.filter((step) => /^(SEARCH|SCAN) /.test(step) && step !== 'SCAN matching').length === 1 && steps.some((step) => /^SEARCH (token_containers|m) USING PRIMARY KEY/.test(step))

let tables: Set<string>
const isTable = (name: string) => tables.has(name)

describe('query plans of the lists', () => {
  const temporary = useTemporaryDatabase('query-plans')
  const tenantId = randomUUID()
  const otherTenantId = randomUUID()
  const now = 1_000_000

  /** The plans of every query `work` runs on the read pool. */
  async function plansOf(work: () => Promise<unknown>): Promise<Plan[]> {
    const reader = sql(temporary.db.reader)
    const plans: Plan[] = []
    for (const query of await statementsRun(reader, work)) {
      const rows: { id: number; parent: number; detail: string }[] = await reader.raw(`EXPLAIN QUERY PLAN ${query.sql}`, query.bindings)
      const ids = rows.map((row) => row.id)
      plans.push({ sql: query.sql, steps: rows.map((row) => row.detail), parents: rows.map((row) => ids.indexOf(row.parent)) })
    }
    return plans
  }

  /**
   * Fails on any unbounded step; with `uses`, also on a plan that does not search by it (where
   * SQLite could walk the tenant's whole index in list order instead, which no single step shows).
   */
  async function expectProportionalToPage(work: () => Promise<unknown>, options: { sortsBoundedSet?: boolean; uses?: string } = {}): Promise<void> {
    const plans = await plansOf(work)
    expect(plans.length).toBeGreaterThan(0)
    if (process.env.SHOW_PLANS) for (const plan of plans) console.log(plan.sql, "\n   ", plan.steps.join("\n    "))
    for (const plan of plans) {
      expect({ sql: plan.sql, unbounded: unboundedSteps(plan, options) }).toEqual({ sql: plan.sql, unbounded: [] })
      if (options.uses && !readsCountersOnly(plan) && !probesOneRange(plan)) expect({ sql: plan.sql, steps: plan.steps }).toEqual({ sql: plan.sql, steps: expect.arrayContaining([expect.stringContaining(options.uses)]) })
    }
  }

  beforeAll(async () => {
    const writer = sql(temporary.db.writer)
    tables = new Set((await writer('sqlite_master').select('name').where('type', 'table')).map((row: { name: string }) => row.name))
    for (const id of [tenantId, otherTenantId]) await insertTenant(temporary.db.writer, { id, name: id, owner_user_id: null, created_at: 0 })
    const writes = new WriteQueue(temporary.db.writer)
    const types = ['token', 'card', 'bank']
    for (const tenant of [tenantId, otherTenantId]) {
      const tokens = Array.from({ length: 300 }, (_, i) => ({ token: storedToken(tenant, i, types[i % 3]), searchIndexes: [searchIndex(tenant, i)] }))
      // A few tokens in a container of their own, which some rules allow alone.
      for (let i = 300; i < 303; i++) tokens.push({ token: { ...storedToken(tenant, i, 'token'), containers: ['/rare/'] }, searchIndexes: [] })
      const entries = Array.from({ length: 600 }, (_, i) => logEntry(tenant, i, types[i % 3]))
      await writes.append((rows) => {
        appendTokens(rows, tokens, () => new Error('duplicate id'))
        appendLogEntries(rows, entries)
      })
    }
    // Half the log is folded into the entity index, the rest is its tail.
    await writes.run((tx) => foldLogEntities(tx, 600))
  })

  function storedToken(tenant: string, i: number, type: string): StoredToken {
    return {
      tenant_id: tenant,
      id: `token-${i}`,
      type,
      key_version: 1,
      sealed_data: Buffer.alloc(40),
      fingerprint: randomBytes(32).toString('hex'),
      fingerprint_expression: '{{ data | stringify }}',
      mask: null,
      containers: [i % 2 ? '/pci/high/' : '/general/high/'],
      metadata: { colour: i % 5 ? 'Red' : 'Blue', size: `${i % 7}` },
      search_indexes: null,
      expires_at: i % 10 ? null : now + i,
      cvc_expires_at: null,
      created_by: null,
      created_at: i,
      modified_by: null,
      modified_at: null
    }
  }

  /** Each token's one search index value: one of 10, so a value matches a tenth of the tokens. */
  const searchValue = (i: number) => (i % 10).toString(16).repeat(64)
  const searchIndex = (tenant: string, i: number) => ({ tenant_id: tenant, token_id: `token-${i}`, index_hash: searchValue(i) })

  function logEntry(tenant: string, i: number, type: string): LogRow {
    return { tenant_id: tenant, actor_id: null, actor_type: null, entity_type: type, entity_id: `token-${i % 300}`, operation: 'read', message: 'Token retrieved', created_at: i, count: null }
  }

  const tokenFilter = (filter: Partial<TokenFilter> = {}): TokenFilter => ({ tenantId, now, ids: [], types: [], metadata: {}, ...filter })
  const listAndCountTokens = (filter: TokenFilter) => () => findTokenPage(temporary.db.reader, filter, 100, 0)

  /** The access predicate the REST route builds for an application whose rules name containers. */
  function ruleBound(containers: string[]): TokenFilter['visibleBy'] {
    const actor: Actor = {
      type: 'application',
      id: randomUUID(),
      tenantId,
      permissions: [],
      rules: containers.map((container, priority) => ({ priority, container, transform: 'mask', permissions: ['token:read'] }))
    }
    return visibleTokens(actor, 'token:read')
  }

  describe('tokens', () => {
    it('unfiltered: the page by the time index, the count from the counters', () => expectProportionalToPage(listAndCountTokens(tokenFilter())))
    it('by one type', () => expectProportionalToPage(listAndCountTokens(tokenFilter({ types: ['card'] }))))
    it('by several types', () => expectProportionalToPage(listAndCountTokens(tokenFilter({ types: ['card', 'bank'] }))))
    it('by metadata, one key', () => expectProportionalToPage(listAndCountTokens(tokenFilter({ metadata: { colour: 'blue' } })), { uses: METADATA_INDEX }))
    it('by metadata, two keys', () => expectProportionalToPage(listAndCountTokens(tokenFilter({ metadata: { colour: 'blue', size: '3' } })), { uses: METADATA_INDEX }))
    it('by metadata and type', () => expectProportionalToPage(listAndCountTokens(tokenFilter({ metadata: { colour: 'red' }, types: ['bank'] })), { uses: METADATA_INDEX }))
    it('with access-rule containers most tokens are in: the page by the time index, each token checked; the count through its candidates', () =>
      expectProportionalToPage(listAndCountTokens(tokenFilter({ visibleBy: ruleBound(['/pci/', '/bank/high/']) })), { sortsBoundedSet: true }))
    it('with an access-rule container few tokens are in: its candidates, each looked up, sorted', () =>
      expectProportionalToPage(listAndCountTokens(tokenFilter({ visibleBy: ruleBound(['/rare/']) })), { sortsBoundedSet: true, uses: CONTAINER_RANGE }))
    it('with access-rule containers and metadata fewer tokens hold: the metadata index', () =>
      expectProportionalToPage(listAndCountTokens(tokenFilter({ visibleBy: ruleBound(['/pci/']), metadata: { colour: 'blue' } })), { uses: METADATA_INDEX }))
    it('with an access-rule container fewer tokens are in than hold the metadata: its candidates', () =>
      expectProportionalToPage(listAndCountTokens(tokenFilter({ visibleBy: ruleBound(['/rare/']), metadata: { colour: 'red' } })), { sortsBoundedSet: true, uses: CONTAINER_RANGE }))
    // A page in the second half of a list counted exactly is read from the oldest end, by the same indexes.
    // (300 tokens a tenant, a third of each type.)
    const deepPage = (filter: TokenFilter, offset: number) => () => findTokenPage(temporary.db.reader, filter, 20, offset)
    it('a deep page, unfiltered', () => expectProportionalToPage(deepPage(tokenFilter(), 250)))
    it('a deep page of one type', () => expectProportionalToPage(deepPage(tokenFilter({ types: ['card'] }), 70)))
    it('a deep page of several types', () => expectProportionalToPage(deepPage(tokenFilter({ types: ['card', 'bank'] }), 150)))
    // The ids a caller names bound what is sorted.
    it('by ids', () => expectProportionalToPage(listAndCountTokens(tokenFilter({ ids: ['token-3', 'token-4', 'token-200'] })), { sortsBoundedSet: true, uses: '(tenant_key=? AND id=?)' }))
  })

  describe('tokens, v2 (cursor pages)', () => {
    const seek = (criteria: Partial<TokenSeek> = {}): TokenSeek => ({ tenantId, now, containers: [], metadata: {}, ...criteria })
    /** The first page and the page after a cursor in the middle of the list (token-150's position). */
    const pages = (criteria: TokenSeek) => () =>
      Promise.all([seekTokens(temporary.db.reader, criteria, 20), seekTokens(temporary.db.reader, criteria, 20, { createdAt: 150, id: 'token-150' })])

    const after = (criteria: TokenSeek) => () => seekTokens(temporary.db.reader, criteria, 20, { createdAt: 150, id: 'token-150' })

    it('unfiltered: the time index', () => expectProportionalToPage(pages(seek()), { uses: 'tokens_tenant_key_created_at_index (tenant_key=?' }))
    it('unfiltered, resumed inside the time index at the cursor', () => expectProportionalToPage(after(seek()), { uses: 'tokens_tenant_key_created_at_index (tenant_key=? AND created_at<?)' }))
    it('by type', () => expectProportionalToPage(pages(seek({ type: 'card' })), { uses: 'tokens_tenant_key_type_created_at_index (tenant_key=? AND type=?' }))
    it('by type after a cursor', () => expectProportionalToPage(after(seek({ type: 'card' })), { uses: 'tokens_tenant_key_type_created_at_index (tenant_key=? AND type=? AND created_at<?)' }))
    it('by container (each token checked, newest first)', () => expectProportionalToPage(pages(seek({ containers: ['/pci/'] }))))
    it('by an access-rule container few tokens are in: its candidates, each looked up, sorted', () =>
      expectProportionalToPage(pages(seek({ visibleBy: ruleBound(['/rare/']) })), { sortsBoundedSet: true, uses: CONTAINER_RANGE }))
    it('by access-rule containers most tokens are in: the time index, each token checked', () =>
      expectProportionalToPage(pages(seek({ visibleBy: ruleBound(['/pci/', '/general/']) })), { uses: 'tokens_tenant_key_created_at_index (tenant_key=?' }))
    it('by metadata, exact (the folded index, the value checked on the token)', () =>
      expectProportionalToPage(pages(seek({ metadata: { colour: 'Red' } })), { uses: METADATA_WALK }))
    it('by metadata after a cursor', () => expectProportionalToPage(after(seek({ metadata: { colour: 'Red' } })), { uses: `${METADATA_WALK} AND created_at<?)` }))
    // The key matching fewest tokens (counted in its index first) drives the walk.
    it('by two metadata keys', () => expectProportionalToPage(pages(seek({ metadata: { colour: 'Red', size: '3' } })), { uses: METADATA_WALK }))
    it('by metadata, type and access-rule containers', () =>
      expectProportionalToPage(pages(seek({ metadata: { colour: 'Red' }, type: 'bank', visibleBy: ruleBound(['/pci/']) })), { uses: METADATA_WALK }))
    it('by search index value', () => expectProportionalToPage(pages(seek({ indexHash: searchValue(3) })), { uses: SEARCH_INDEX }))
    it('by search index value and container', () => expectProportionalToPage(pages(seek({ indexHash: searchValue(3), containers: ['/pci/'] })), { uses: SEARCH_INDEX }))
    it('by search index value after a cursor', () => expectProportionalToPage(after(seek({ indexHash: searchValue(3) })), { uses: `${SEARCH_INDEX} AND created_at<?)` }))
    // A fingerprint's tokens are few (deduplication): they are sorted.
    it('by fingerprint', async () => {
      const [{ fingerprint: stored }] = await sql(temporary.db.reader)('tokens').select('fingerprint').where({ tenant_key: tenantKeys(temporary.db.reader).keyOf(tenantId), id: 'token-7' })
      const fingerprint = Buffer.from(stored).toString('hex')
      expect((await seekTokens(temporary.db.reader, seek({ fingerprint }), 20)).rows.map((row) => row.id)).toEqual(['token-7'])
      await expectProportionalToPage(pages(seek({ fingerprint })), { sortsBoundedSet: true, uses: 'tokens_fingerprint_index (fingerprint=?)' })
    })
  })

  describe('logs', () => {
    const logFilter = (filter: Partial<LogFilter> = {}): LogFilter => ({ tenantId, ...filter })
    const listAndCountLogs = (filter: LogFilter) => () => Promise.all([listLogs(temporary.db.reader, filter, 100, 0), countLogs(temporary.db.reader, filter)])

    it('unfiltered', () => expectProportionalToPage(listAndCountLogs(logFilter())))
    it('by entity type', () => expectProportionalToPage(listAndCountLogs(logFilter({ entityType: 'card' })), { uses: 'logs_tenant_key_entity_type_created_at_index' }))
    it('by date range', () => expectProportionalToPage(listAndCountLogs(logFilter({ startDate: 100, endDate: 400 }))))
    it('by entity type and date range', () => expectProportionalToPage(listAndCountLogs(logFilter({ entityType: 'card', startDate: 100, endDate: 400 })), { uses: 'logs_tenant_key_entity_type_created_at_index' }))
    // An entity's folded entries come out of the index newest first, merged with the sorted tail: none of them is sorted.
    it('by entity type and id', () => expectProportionalToPage(listAndCountLogs(logFilter({ entityType: 'card', entityId: 'token-3' })), { uses: ENTITY_INDEX }))
    it('by entity id (each entity type, merged)', () => expectProportionalToPage(listAndCountLogs(logFilter({ entityId: 'token-3' })), { uses: ENTITY_INDEX }))
    it('by entity and date range', () =>
      expectProportionalToPage(listAndCountLogs(logFilter({ entityType: 'card', entityId: 'token-3', startDate: 0, endDate: 500 })), {
        uses: `${ENTITY_INDEX} AND created_at>? AND created_at<?)`
      }))
    // The activity chart: whole hours from the hourly counters (a range of hours), parts of an hour through the time indexes.
    const HOUR = 3_600_000
    const chartPeriods: [number, number][] = [
      [0, HOUR],
      [HOUR + 100, 3 * HOUR - 100]
    ]
    it('activity chart', () => expectProportionalToPage(() => countLogsByPeriod(temporary.db.reader, logFilter(), chartPeriods)))
    it('activity chart by entity type', () => expectProportionalToPage(() => countLogsByPeriod(temporary.db.reader, logFilter({ entityType: 'card' }), chartPeriods)))
    it('activity chart by entity', () =>
      expectProportionalToPage(() => countLogsByPeriod(temporary.db.reader, logFilter({ entityType: 'card', entityId: 'token-3' }), chartPeriods), { uses: ENTITY_INDEX }))
    it("flags an entity page that sorts all of the entity's entries", async () => {
      const sortedInFull = () => sql(temporary.db.reader)('log_entities').where({ tenant_key: tenantKeys(temporary.db.reader).keyOf(tenantId), entity_type: 'card', entity_id: 'token-3' }).orderBy('seq', 'desc').limit(100)
      expect((await plansOf(sortedInFull)).flatMap((plan) => unboundedSteps(plan))).toEqual(['USE TEMP B-TREE FOR ORDER BY'])
    })
  })

  it('deduplication finds a fingerprint through its index', async () => {
    const [{ fingerprint: stored }] = await sql(temporary.db.reader)('tokens').select('fingerprint').where({ tenant_key: tenantKeys(temporary.db.reader).keyOf(tenantId), id: 'token-7' })
    const fingerprint = Buffer.from(stored).toString('hex')
    expect(await findByFingerprint(temporary.db.reader, tenantId, 'card', fingerprint, now)).toMatchObject({ id: 'token-7' })
    // Only the tokens of one fingerprint are sorted.
    await expectProportionalToPage(() => findByFingerprint(temporary.db.reader, tenantId, 'card', fingerprint, now, 'token-7'), {
      sortsBoundedSet: true,
      uses: 'tokens_fingerprint_index (fingerprint=?)'
    })
  })

  it('flags a list that reads a whole table', async () => {
    const plans = await plansOf(() => sql(temporary.db.reader)('tokens').where('metadata', 'like', '%Red%').orderBy('created_at', 'desc').limit(100))
    expect(plans.flatMap((plan) => unboundedSteps(plan))).not.toEqual([])
  })
})
