/**
 * GET /tokens pages far from the first: a page in the second half of a list whose count is
 * exact is read from the oldest end; it must hold what reading from the newest end would.
 */
import { describe, expect, it } from 'vitest'
import { service, masker, revealer, list, useTokensService, type Body } from './fixture'

useTokensService()

const tokenize = (body: unknown) => service.request('POST', '/tokenize', { key: masker.key, body })

describe('GET /tokens pages far from the first', () => {
  /** The ids of every page of `size`, as `key` reads them, and the total it was told. */
  const pagesOf = async (key: string, query: string, size: number) => {
    const first = await list(`${query}&size=${size}`, key)
    const total = first.body.pagination.total_items as number
    const pages: string[][] = []
    for (let page = 1; page <= Math.ceil(total / size) + 1; page++) {
      const response = await list(`${query}&size=${size}&page=${page}`, key)
      expect(response.status).toBe(200)
      pages.push(response.body.data.map((token: Body) => token.id))
    }
    return { total, pages }
  }

  it('holds the same tokens in the same order on every page, counted or not, whichever end a page is read from', async () => {
    // Many tokens of one millisecond (one tokenize call), so the order within a millisecond counts too.
    expect((await tokenize(Array.from({ length: 40 }, (_, i) => (i % 3 ? `same moment ${i}` : { type: 'bank', data: { routing_number: '021000021', account_number: String(1000 + i) } })))).status).toBe(200)
    service.clock.advance(1000)
    expect((await tokenize(['a moment later', 'and another'])).status).toBe(200)
    for (const query of ['', 'type=bank', 'type=token&type=bank']) {
      // The masker's count comes from the counters, the revealer's (a rule on `/`) from the filter: two ways to the same pages.
      const counted = await pagesOf(masker.key, query, 7)
      const filtered = await pagesOf(revealer.key, query, 7)
      expect(counted).toEqual(filtered)
      const ids = counted.pages.flat()
      expect(new Set(ids).size).toBe(counted.total)
      expect(counted.pages.at(-1)).toEqual([])
    }
  })
})
