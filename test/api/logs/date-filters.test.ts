/**
 * `start_date` and `end_date` are read strictly: a date is midnight UTC, a
 * date-time needs `Z` or an offset (never the server's local time zone), and a
 * day or time that does not exist is a 400 naming the field, never rolled over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'

describe('GET /logs date filters', () => {
  let service: TestService
  let appIds: string[]
  beforeAll(async () => {
    service = await startTestService()
    appIds = []
    // One application created just before, at and just after midnight UTC of 2026-03-02.
    for (const time of ['2026-03-01T23:59:59.999Z', '2026-03-02T00:00:00.000Z', '2026-03-02T00:00:00.001Z']) {
      service.clock.set(time)
      appIds.push((await service.createApplication({ name: `at ${time}`, type: 'private', permissions: ['token:read'] })).id)
    }
  })
  afterAll(() => service.stop())

  const createdApps = async (query: string) => {
    const response = await service.request('GET', `/logs?entity_type=application&${query}`)
    expect(response.status).toBe(200)
    return response.body.data.map((entry: { entity_id: string }) => entry.entity_id).filter((id: string) => appIds.includes(id)).reverse()
  }

  it('reads a date as midnight UTC and a date-time by its Z or offset, to the millisecond', async () => {
    expect(await createdApps('start_date=2026-03-02')).toEqual(appIds.slice(1))
    expect(await createdApps('end_date=2026-03-02')).toEqual(appIds.slice(0, 1))
    expect(await createdApps('start_date=2026-03-01T19:00:00.000001-05:00&end_date=2026-03-02T01:00:00.001%2B01:00')).toEqual(appIds.slice(1, 2))
    expect(await createdApps('start_date=2026-03-02T00:00Z&end_date=2026-03-02T00:00:00.002Z')).toEqual(appIds.slice(1, 3))
  })

  it.each([
    ['start_date=2026-02-30', 'start_date', 'start_date names a day or time that does not exist (such as February 30, month 13 or hour 24)'],
    ['end_date=2026-13-01', 'end_date', 'end_date names a day or time that does not exist (such as February 30, month 13 or hour 24)'],
    ['start_date=2026-11-01T24:00:00Z', 'start_date', 'start_date names a day or time that does not exist (such as February 30, month 13 or hour 24)'],
    ['start_date=2026-11-01T12:60:00Z', 'start_date', 'start_date names a day or time that does not exist (such as February 30, month 13 or hour 24)'],
    ['start_date=2026-11-01T12:00:60Z', 'start_date', 'start_date names a day or time that does not exist (such as February 30, month 13 or hour 24)'],
    ['start_date=2027-02-29', 'start_date', 'start_date names a day or time that does not exist (such as February 30, month 13 or hour 24)'],
    ['start_date=2026-11-01T12:00:00%2B15:00', 'start_date', 'start_date names a day or time that does not exist (such as February 30, month 13 or hour 24)'],
    ['start_date=2026-11-29T03:53:25', 'start_date', 'start_date must state its time zone: add Z (UTC) or an offset such as +01:00 after the time, as in 2026-11-01T12:00:00Z'],
    ['end_date=2026-11-29T03:53', 'end_date', 'end_date must state its time zone: add Z (UTC) or an offset such as +01:00 after the time, as in 2026-11-01T12:00:00Z'],
    ['start_date=2026-11-01%20(x)', 'start_date', 'start_date must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC'],
    ['start_date=2026-11-01T12:00:00ZZ', 'start_date', 'start_date must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC'],
    ['end_date=2026-11-01%2012:00:00Z', 'end_date', 'end_date must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC'],
    ['end_date=%2B002026-11-01', 'end_date', 'end_date must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC']
  ])('refuses ?%s with a 400 naming %s', async (query, field, message) => {
    const response = await service.request('GET', `/logs?${query}`)
    expect(response.status).toBe(400)
    expect(response.body.errors).toEqual({ [field]: [message] })
  })
})
