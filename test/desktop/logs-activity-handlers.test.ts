/**
 * The audit view's requests through the desktop's IPC handlers over a real
 * vault: the activity chart's counts per period (from hourly counters, and
 * entry by entry for parts of an hour) equal what the list counts for the same
 * period, whatever the filters, also once older entries were archived; an
 * entity's page agrees with the whole log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogFilterQuery } from '../../src/shared/ipc'
import type { LogEntry, Page } from '../../src/shared/types'
import type { DesktopVault } from '../../src/main/desktop/desktop-vault'
import { dispatch } from '../../src/main/desktop/dispatch'
import { createDesktopHandlers } from '../../src/main/desktop/handlers'
import { silentLogger } from '../../src/main/infra/logger'
import { TestClock } from '../helpers/clock'
import { startTestDesktop, type TestDesktop } from '../helpers/desktop'

type Result<T> = { ok: true; value: T } | { ok: false; problem: unknown }

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

describe('the audit view over IPC', () => {
  let started: TestDesktop
  let desktop: DesktopVault
  const logger = silentLogger()
  const clock = new TestClock(Date.parse('2026-11-20T00:00:00.000Z'))
  const start = clock.now()
  let cardId: string

  const value = async <T>(channel: string, ...args: unknown[]): Promise<T> => {
    const result = (await dispatch(createDesktopHandlers(desktop), channel, args, logger)) as Result<T>
    if (!result.ok) throw new Error(`${channel}: ${JSON.stringify(result.problem)}`)
    return result.value
  }
  const activity = (filters: LogFilterQuery, periods: [number, number][]) => value<number[]>('app:logs.activity', filters, periods)
  /** What the list counts in [from, to) (the log's own reads, made by these calls, come later than any period). */
  const listed = async (filters: LogFilterQuery, [from, to]: [number, number]) => {
    const page = await value<Page<LogEntry>>('app:logs.list', { ...filters, start_date: new Date(from).toISOString(), end_date: new Date(to).toISOString(), size: 100 })
    return page.pagination.total_items
  }

  beforeAll(async () => {
    started = await startTestDesktop({ logger, version: '1.0.0', clock })
    desktop = started.desktop
    await value('app:vault.create', { tenantName: 'Acme', keyStorage: 'key-file' })
    cardId = (await value<{ id: string }>('app:tokens.create', { type: 'card', data: { number: '4111111111111111', expiration_month: 12, expiration_year: 2030 } })).id
    // Three days of activity, every 25 minutes: a token created, and the card read, on alternate steps.
    for (let step = 0; step < 3 * DAY; step += 25 * MINUTE) {
      clock.set(new Date(start + step + 7 * MINUTE).toISOString())
      if ((step / (25 * MINUTE)) % 2 === 0) await value('app:tokens.create', { type: 'token', data: `t${step}` })
      else await value('app:tokens.get', cardId)
    }
    clock.set(new Date(start + 4 * DAY).toISOString())
  })
  afterAll(() => started.dispose())

  // Days and hours as the view asks for them, and periods that start within an hour.
  const periods: [number, number][] = [
    [start, start + DAY],
    [start + DAY, start + 2 * DAY],
    [start + 5 * HOUR, start + 6 * HOUR],
    [start + 10 * MINUTE, start + 50 * MINUTE],
    [start + 90 * MINUTE, start + 30 * HOUR + 20 * MINUTE],
    [start + 3 * DAY, start + 4 * DAY],
    [start - DAY, start]
  ]

  it.each([
    ['no filter', {}],
    ['an entity type', { entity_type: 'token' }],
    ['an entity', { entity_type: 'card', entity_id: 'CARD' }],
    ['an entity id alone', { entity_id: 'CARD' }]
  ])('counts per period what the list counts for that period, with %s', async (_name, filters: LogFilterQuery) => {
    const query = filters.entity_id ? { ...filters, entity_id: cardId } : filters
    const expected = await Promise.all(periods.map((period) => listed(query, period)))
    expect(expected.slice(0, 2).every((count) => count > 20)).toBe(true)
    expect(await activity(query, periods)).toEqual(expected)
  })

  it('keeps counting right once the older entries are archived', async () => {
    const day = [start + DAY, start + 2 * DAY] as [number, number]
    const before = await activity({ entity_type: 'token' }, [day])
    await value('app:logs.archive', new Date(start + DAY + 12 * HOUR + 3 * MINUTE).toISOString())
    const [afterArchive] = await activity({ entity_type: 'token' }, [day])
    expect(afterArchive).toBe(await listed({ entity_type: 'token' }, day))
    expect(afterArchive).toBeGreaterThan(0)
    expect(afterArchive).toBeLessThan(before[0])
    expect(await activity({ entity_type: 'token' }, [[start, start + DAY]])).toEqual([0])
  })

  it("pages an entity's entries newest first, as the whole log shows them", async () => {
    const byEntity = (await value<Page<LogEntry>>('app:logs.list', { entity_type: 'card', entity_id: cardId, size: 20, page: 2 })).data
    const wholeLog = (await value<Page<LogEntry>>('app:logs.list', { entity_type: 'card', size: 100 })).data.filter((entry) => entry.entity_id === cardId)
    expect(byEntity).toHaveLength(20)
    expect(byEntity).toEqual(wholeLog.slice(20, 40))
  })
})
