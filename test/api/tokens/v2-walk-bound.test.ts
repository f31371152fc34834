/**
 * The v2 token list and search read a bounded number of rows per request: a metadata filter whose value
 * other tokens hold in another case passes over those tokens a bounded run at a time, answering a short or
 * empty page with a `next` cursor, instead of reading on to the end of the tenant's tokens. The same holds
 * for the conditions the database checks itself (access rules, a container term): a request walks a bounded
 * window of the index, however few of its tokens the caller may see.
 */
import { randomBytes } from 'node:crypto'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { sql } from '../../../src/main/storage/connections'
import { engineOf } from '../../../src/main/storage/dialect'
import { SEEK_ROWS_PER_REQUEST } from '../../../src/main/storage/repositories/tokens.repository'
import { create, revealer, rule, service, useTokensService, type App, type Body } from './fixture'
import { beforeAndAfter, measurable, sqlWork } from './sql-work'

useTokensService()

/** Lists and searches every container. */
let reader: App
beforeAll(async () => {
  reader = await service.createApplication({ name: 'Reader', type: 'private', rules: [rule(1, '/', 'reveal', ['token:read', 'token:search'])] })
})

/** Tokens read from the database by the requests made while it runs: the rows of every `tokens` query on the read pool. */
let tokenRowsRead = 0
const countTokenRows = (response: unknown, query: { sql?: string }) => {
  if (Array.isArray(response) && /select [`"]?tokens[`"]?\.\*/i.test(query.sql ?? '')) tokenRowsRead += response.length
}
beforeEach(() => {
  sql(service.host.vault.db.reader).on('query-response', countTokenRows)
})
afterEach(() => {
  sql(service.host.vault.db.reader).removeListener('query-response', countTokenRows)
})

/** Each page of a v2 list or search (`request(start)`), following `next` to the end, with the token rows each request read. */
async function pagesOf(request: (start?: string) => Promise<{ status: number; body: Body }>): Promise<{ ids: string[]; next?: string; rowsRead: number }[]> {
  const pages: { ids: string[]; next?: string; rowsRead: number }[] = []
  let start: string | undefined
  do {
    tokenRowsRead = 0
    const response = await request(start)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    start = (response.body.pagination as { next?: string }).next
    pages.push({ ids: (response.body.data as Body[]).map((token) => token.id as string), next: start, rowsRead: tokenRowsRead })
    expect(pages.length).toBeLessThan(50)
  } while (start !== undefined)
  return pages
}

/** Tokenizes `count` tokens holding `tag` under `metadata.tag` (in the default container), in one clock millisecond after the last. */
async function tokenizeTagged(tag: string, count: number): Promise<void> {
  service.clock.advance(1000)
  const body = Array.from({ length: count }, (_, i) => ({ type: 'token', data: `value ${i}`, metadata: { tag } }))
  const response = await service.request('POST', '/tokenize', { key: revealer.key, body })
  expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(200)
}

/** A token holding exactly `tag`, one clock second after the last; its id. */
async function tagged(tag: string): Promise<string> {
  service.clock.advance(1000)
  return (await create({ type: 'token', data: 'value', metadata: { tag } })).id
}

// Runs first: the next test tokenizes 1,000 tokens a millisecond, which a walk would sort whole.
describe.skipIf(!measurable)('v2 lists and searches whose conditions the database checks match few tokens', () => {
  const PAGE_SIZE = 2

  it('walk a bounded window of the index per request, answer short or empty pages with next, and find exactly the matching tokens', async () => {
    const rareOnly = await service.createApplication({ name: 'Rare only', type: 'private', rules: [rule(1, '/rare/', 'reveal', ['token:read', 'token:search'])] })
    const rare = async () => {
      service.clock.advance(1000)
      return (await create({ type: 'token', data: 'rare', containers: ['/rare/'] })).id
    }
    /** Tokens the caller may not see, `TIES` a millisecond (as one request tokenizes them): the walk sorts each millisecond's by id. */
    const TIES = 100
    const invisible = async (count: number) => {
      for (let i = 0; i < count; i += TIES) await tokenizeTagged(`t${randomBytes(6).toString('hex')}`, TIES)
    }
    const oldest = await rare()
    await invisible(1000)
    const middle = await rare()
    await invisible(2000)
    const newest = await rare()

    /**
     * Pages to the end, finding exactly the rare tokens, as the caller allowed only `/rare/` and by a search by
     * container: the most SQL work one request took, for each. The rule-bound caller's pages come full, from
     * the few tokens its rules allow (the containers' index); the search walks windows of the tenant's tokens.
     */
    const page = (start?: string) => (start === undefined ? '' : `&start=${encodeURIComponent(start)}`)
    async function pagedWork(): Promise<number[]> {
      const requests = [
        { request: (start?: string) => service.request('GET', `/v2/tokens?size=${PAGE_SIZE}${page(start)}`, { key: rareOnly.key }), pageSizes: [2, 1] },
        { request: (start?: string) => service.request('POST', '/v2/tokens/search', { key: reader.key, body: { query: 'container:/rare/', size: PAGE_SIZE, start } }) }
      ]
      const results: number[] = []
      for (const { request, pageSizes } of requests) {
        const work: number[] = []
        const pages = await pagesOf(async (start) => {
          const measured = await sqlWork(() => request(start))
          work.push(measured.work)
          return measured.result
        })
        expect(pages.flatMap((entry) => entry.ids)).toEqual([newest, middle, oldest])
        if (pageSizes) expect(pages.map((entry) => entry.ids.length)).toEqual(pageSizes)
        else expect(pages.some((entry) => entry.ids.length === 0 && entry.next !== undefined)).toBe(true)
        results.push(Math.max(...work))
      }
      return results
    }

    // More than twice the tokens, none of them visible: a request's work stays the same.
    const { before, after } = await beforeAndAfter(pagedWork, () => invisible(5000))
    if (engineOf(sql(service.host.vault.db.reader)) === 'sqlite') {
      for (const [i, mostWork] of after.entries()) expect(mostWork).toBeLessThan(1.25 * before[i])
    } else {
      // The window, then its end found again: each read on to the end of its last millisecond's tokens
      // (to sort them by id). PostgreSQL may read what is left of the walk whole instead, and sort it,
      // when its statistics put that at about a window: a request stays within a few windows, not the tenant.
      for (const mostWork of [...before, ...after]) expect(mostWork).toBeLessThanOrEqual(4 * SEEK_ROWS_PER_REQUEST)
    }
  })
})

describe('v2 lists and searches passing over metadata values in another case', () => {
  /** A request reads its page, one row more, and at most 1,000 rows it passes over (in batches of up to 101). */
  const ROWS_READ_AT_MOST = 1000 + 2 * 101

  it('read a bounded number of rows per request, answer short or empty pages with next, and find exactly the exact-case matches', async () => {
    const tag = `t${randomBytes(6).toString('hex')}`
    const exact = tag.toUpperCase()
    const oldest = await tagged(exact)
    await tokenizeTagged(tag, 1000)
    await tokenizeTagged(tag, 1000)
    const middle = await tagged(exact)
    await tokenizeTagged(tag, 1000)
    const newest = await tagged(exact)

    const search = await pagesOf((start) => service.request('POST', '/v2/tokens/search', { key: reader.key, body: { query: `metadata.tag:${exact}`, size: 1, start } }))
    const list = await pagesOf((start) =>
      service.request('GET', `/v2/tokens?metadata.tag=${exact}&size=1${start === undefined ? '' : `&start=${encodeURIComponent(start)}`}`, { key: reader.key })
    )
    for (const pages of [search, list]) {
      expect(pages.flatMap((page) => page.ids)).toEqual([newest, middle, oldest])
      expect(pages.some((page) => page.ids.length === 0 && page.next !== undefined)).toBe(true)
      expect(Math.max(...pages.map((page) => page.rowsRead))).toBeLessThanOrEqual(ROWS_READ_AT_MOST)
    }
  })
})
