/**
 * The desktop's activity chart counts the audit log per period from hourly
 * counters, and entry by entry only for parts of an hour: each count must equal
 * a count of that period alone, whatever the filters, for periods on the hour
 * or not, shorter than an hour, that overlap, touch or hold nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { appendLogEntries, countLogs, countLogsByPeriod, foldLogEntities, HOUR, type LogFilter, type LogRow } from '../../src/main/storage/repositories/logs.repository'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { WriteQueue } from '../../src/main/storage/write-queue'
import { useTemporaryDatabase } from '../helpers/database'

const MINUTE = 60_000

describe('countLogsByPeriod', () => {
  let rows: LogRow[] = []
  const temporary = useTemporaryDatabase('activity')
  const db = () => temporary.db

  beforeAll(async () => {
    for (const [id, name] of [['t', 'Tenant'], ['u', 'Other']]) await insertTenant(db().writer, { id, name, owner_user_id: null, created_at: 0 })
    const entry = (tenant: string, entityId: string, createdAt: number): LogRow => ({
      tenant_id: tenant,
      actor_id: null,
      actor_type: null,
      entity_type: entityId.startsWith('card') ? 'card' : 'token',
      entity_id: entityId,
      operation: 'read',
      message: 'Token retrieved',
      created_at: createdAt,
      count: null
    })
    // 17 minutes apart over about 17 hours, so hours hold a few entries each.
    rows = Array.from({ length: 60 }, (_, i) => entry(i % 7 === 0 ? 'u' : 't', i % 3 === 0 ? 'card-1' : `token-${i % 4}`, 1000 + 17 * MINUTE * i))
    const writes = new WriteQueue(db().writer)
    await writes.append((buffer) => appendLogEntries(buffer, rows))
    // Half the entries folded into the entity index, half in the tail: both paths of an entity filter.
    await writes.run((tx) => foldLogEntities(tx, 30))
  })

  const periods: [number, number][] = [
    [0, 1000],
    [0, HOUR],
    [HOUR, 4 * HOUR],
    [2 * HOUR, 3 * HOUR],
    [1000, 1001],
    [20 * MINUTE, 40 * MINUTE],
    [HOUR - 1, 5 * HOUR + 1],
    [90 * MINUTE, 10 * HOUR + 5 * MINUTE],
    [3 * HOUR, 24 * HOUR],
    [30 * HOUR, 40 * HOUR]
  ]

  it.each([
    ['no filter', {}],
    ['an entity type', { entityType: 'card' }],
    ['an entity id', { entityType: 'token', entityId: 'token-2' }],
    ['an entity id of any type', { entityId: 'card-1' }],
    ['a date range (which the periods replace)', { startDate: HOUR, endDate: 2 * HOUR }]
  ])('equals a count per period with %s', async (_name, filters) => {
    const filter: LogFilter = { tenantId: 't', ...filters }
    const matches = (row: LogRow) =>
      row.tenant_id === filter.tenantId && [undefined, row.entity_type].includes(filter.entityType) && [undefined, row.entity_id].includes(filter.entityId)
    const expected = periods.map(([start, end]) => rows.filter((row) => matches(row) && row.created_at >= start && row.created_at < end).length)
    // The list's own count agrees.
    expect(await Promise.all(periods.map(([startDate, endDate]) => countLogs(db().reader, { ...filter, startDate, endDate })))).toEqual(expected)
    expect(expected.some((count) => count > 0)).toBe(true)
    expect(await countLogsByPeriod(db().reader, filter, periods)).toEqual(expected)
  })

  it('answers no periods with no counts', async () => {
    expect(await countLogsByPeriod(db().reader, { tenantId: 't' }, [])).toEqual([])
  })
})
