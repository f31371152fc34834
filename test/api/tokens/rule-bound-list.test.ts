/**
 * A v1 list (`GET /tokens`) by a caller whose access rules allow only a rare container: its page and its
 * `total_items` are found through the containers' index, so the SQL work of a request does not grow with
 * the tokens the caller may not see. Before, each page and each count walked the tenant's whole token
 * index, checking every token's containers.
 */
import { describe, expect, it } from 'vitest'
import { sql } from '../../../src/main/storage/connections'
import { statementsRun } from '../../helpers/database'
import { create, revealer, rule, service, useTokensService, type Body } from './fixture'
import { beforeAndAfter, measurable, sqlWork } from './sql-work'

useTokensService()

/** `count` tokens in the default container, 100 a request (one clock millisecond each). */
async function invisible(count: number): Promise<void> {
  for (let made = 0; made < count; made += 100) {
    service.clock.advance(1000)
    const body = Array.from({ length: 100 }, (_, i) => ({ type: 'token', data: `value ${made + i}` }))
    const response = await service.request('POST', '/tokenize', { key: revealer.key, body })
    expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(200)
  }
}

describe.skipIf(!measurable)('v1 lists by a caller allowed only a rare container', () => {
  it('find exactly its tokens and their count, with work that does not grow with the tokens it may not see', async () => {
    const rareOnly = await service.createApplication({ name: 'Rare only', type: 'private', rules: [rule(1, '/rare/', 'reveal', ['token:read'])] })
    const rare = async (containers: string[]) => {
      service.clock.advance(1000)
      return (await create({ type: 'token', data: 'rare', containers })).id
    }
    const oldest = await rare(['/rare/a/'])
    await invisible(1000)
    const middle = await rare(['/general/high/', '/rare/'])
    await invisible(1000)
    const newest = await rare(['/rare/b/c/'])
    // Other callers' tokens in containers that sort next to /rare/: not the caller's.
    await rare(['/rar/'])
    await rare(['/rarely/'])

    const page = (n: number) => service.request('GET', `/tokens?page=${n}&size=2`, { key: rareOnly.key })
    async function pagesAndWork(): Promise<number> {
      let mostWork = 0
      const ids: string[] = []
      for (const n of [1, 2, 3]) {
        const { result: response, work } = await sqlWork(() => page(n))
        mostWork = Math.max(mostWork, work)
        expect(response.status).toBe(200)
        expect((response.body.pagination as Body).total_items).toBe(3)
        ids.push(...(response.body.data as Body[]).map((token) => token.id as string))
      }
      expect(ids).toEqual([newest, middle, oldest])
      return mostWork
    }

    const { before, after } = await beforeAndAfter(pagesAndWork, () => invisible(3000))
    expect(after).toBeLessThan(1.25 * before)
    // A token moved into the container by an update is listed; one moved out is not.
    const moved = await rare(['/general/high/'])
    expect((await service.request('PATCH', `/tokens/${moved}`, { key: revealer.key, body: { containers: ['/rare/z/'] }, contentType: 'application/merge-patch+json' })).status).toBe(200)
    expect((await service.request('PATCH', `/tokens/${middle}`, { key: revealer.key, body: { containers: ['/general/high/'] }, contentType: 'application/merge-patch+json' })).status).toBe(200)
    expect((await service.request('DELETE', `/tokens/${oldest}`, { key: revealer.key })).status).toBe(204)
    const listed = await service.request('GET', '/tokens?size=10', { key: rareOnly.key })
    expect((listed.body.data as Body[]).map((token) => token.id)).toEqual([moved, newest])
    expect((listed.body.pagination as Body).total_items).toBe(2)
  })
})

describe('a v1 list by a caller allowed only a rare container, filtered by metadata', () => {
  it('finds the tokens holding every filtered value and runs no statement twice', async () => {
    const rareOnly = await service.createApplication({ name: 'Rare with metadata', type: 'private', rules: [rule(1, '/rare/', 'reveal', ['token:read'])] })
    const metadata = { team: 'blue', region: 'west' }
    const both = await create({ type: 'token', data: 'both', containers: ['/rare/'], metadata })
    await create({ type: 'token', data: 'one of them', containers: ['/rare/'], metadata: { team: 'blue' } })
    await create({ type: 'token', data: 'not allowed', containers: ['/general/'], metadata })

    const statements = await statementsRun(sql(service.host.vault.db.reader), async () => {
      const response = await service.request('GET', '/tokens?metadata.team=blue&metadata.region=west', { key: rareOnly.key })
      expect(response.status).toBe(200)
      expect((response.body.data as Body[]).map((token) => token.id)).toEqual([both.id])
      expect((response.body.pagination as Body).total_items).toBe(1)
    })
    const texts = statements.map((statement) => JSON.stringify(statement))
    expect(texts.filter((text, index) => texts.indexOf(text) !== index)).toEqual([])
  })
})
