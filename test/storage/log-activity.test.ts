/**
 * The desktop's activity chart counts the audit log per period in one grouped
 * query: each count must equal a count of that period alone, whatever the
 * filters, for periods that overlap, touch or hold nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../../src/main/storage/connections'
import { countLogs, countLogsByPeriod, foldLogEntities } from '../../src/main/storage/repositories/logs.repository'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { tenantKeys } from '../../src/main/storage/tenant-keys'
import { WriteQueue } from '../../src/main/storage/write-queue'
import { useTemporaryDatabase } from '../helpers/database'

describe('countLogsByPeriod', () => {
  const temporary = useTemporaryDatabase('activity')
  const db = () => temporary.db

  beforeAll(async () => {
    for (const id of ['t', 'u']) await insertTenant(db().writer, { id, name: id, owner_user_id: null, created_at: 0 })
    const entry = (tenant: string, entityId: string, createdAt: number, seq: number) => ({
      seq,
      tenant_key: tenantKeys(db().writer).keyOf(tenant),
      entity_type: entityId.startsWith('card') ? 'card' : 'token',
      entity_id: entityId,
      operation: 'read',
      message: 'Token retrieved',
      created_at: createdAt
    })
    const rows = Array.from({ length: 60 }, (_, i) => entry(i % 7 === 0 ? 'u' : 't', i % 3 === 0 ? 'card-1' : `token-${i % 4}`, 1000 + 17 * i, i + 1))
    await sql(db().writer)('logs').insert(rows)
    // Half the entries folded into the entity index, half in the tail: both paths of an entity filter.
    await new WriteQueue(db().writer).run((tx) => foldLogEntities(tx, 30))
  })

  const periods: [number, number][] = [
    [0, 1000],
    [1000, 1100],
    [1100, 1500],
    [1050, 1600],
    [1600, 1601],
    [1500, 3000],
    [5000, 6000]
  ]

  it.each([
    ['no filter', {}],
    ['an entity type', { entityType: 'card' }],
    ['an entity id', { entityType: 'token', entityId: 'token-2' }],
    ['a date range (which the periods replace)', { startDate: 1200, endDate: 1300 }]
  ])('equals a count per period with %s', async (_name, filters) => {
    const filter = { tenantId: 't', ...filters }
    const expected = await Promise.all(periods.map(([start, end]) => countLogs(db().reader, { ...filter, startDate: start, endDate: end })))
    expect(expected.some((count) => count > 0)).toBe(true)
    expect(await countLogsByPeriod(db().reader, filter, periods)).toEqual(expected)
  })

  it('answers no periods with no counts', async () => {
    expect(await countLogsByPeriod(db().reader, { tenantId: 't' }, [])).toEqual([])
  })
})
