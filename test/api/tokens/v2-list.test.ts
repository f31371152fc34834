/** Basis Theory's v2 token list: GET /v2/tokens (filters, cursor pages to the end, visibility by rule, bad input, audit). */
import { randomBytes, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { card, create, creator, logsOf, pciOnly, redactor, revealer, rule, service, useTokensService, type Body } from './fixture'

useTokensService()

const listV2 = (query: string, key = revealer.key) => service.request('GET', `/v2/tokens?${query}`, { key })

/** A container of its own, so a test sees only its tokens. */
const freshContainer = () => `/v2-${randomBytes(6).toString('hex')}/`

/** Every page of a list, following `next` until it is absent; the pages' ids. */
async function pagesOf(query: string, key = revealer.key, from?: string): Promise<string[][]> {
  const pages: string[][] = []
  let start = from
  do {
    const response = await listV2(`${query}${start === undefined ? '' : `&start=${encodeURIComponent(start)}`}`, key)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    pages.push(response.body.data.map((token: Body) => token.id))
    start = response.body.pagination.next
    expect(pages.length).toBeLessThan(50)
  } while (start !== undefined)
  return pages
}

/** Creates `count` tokens in `container`, one clock second apart; their ids, oldest first. */
async function tokensIn(container: string, count: number, body: Body = {}): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    service.clock.advance(1000)
    ids.push((await create({ type: 'token', data: `value ${i}`, containers: [container], ...body })).id)
  }
  return ids
}

describe('GET /v2/tokens', () => {
  it('pages newest first to the end: every token exactly once, next absent on the last page', async () => {
    const container = freshContainer()
    const ids = await tokensIn(container, 7)
    const pages = await pagesOf(`container=${container}&size=3`)
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1])
    expect(pages.flat()).toEqual([...ids].reverse())
  })

  it('ends with no next when the last page is full, and answers an empty list with no next', async () => {
    const container = freshContainer()
    const ids = await tokensIn(container, 4)
    const pages = await pagesOf(`container=${container}&size=2`)
    expect(pages.flat()).toEqual([...ids].reverse())
    expect(pages.at(-1)).toHaveLength(2)
    const empty = await listV2(`container=${freshContainer()}`)
    expect(empty.body).toEqual({ pagination: { page_size: 20 }, data: [] })
  })

  it('pages through tokens created in the same millisecond (by id), each once', async () => {
    const container = freshContainer()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await create({ type: 'token', data: i, containers: [container] })).id)
    const pages = await pagesOf(`container=${container}&size=2`)
    expect(pages.flat()).toEqual([...ids].sort().reverse())
  })

  it('defaults to 20 a page and takes up to 100', async () => {
    const container = freshContainer()
    await tokensIn(container, 21)
    const first = await listV2(`container=${container}`)
    expect(first.body.data).toHaveLength(20)
    expect(first.body.pagination).toEqual({ page_size: 20, next: expect.any(String) })
    const all = await listV2(`container=${container}&size=100`)
    expect(all.body.data).toHaveLength(21)
    expect(all.body.pagination).toEqual({ page_size: 100 })
  })

  it('goes on after the token its cursor names is deleted', async () => {
    const container = freshContainer()
    const ids = (await tokensIn(container, 5)).reverse()
    const first = await listV2(`container=${container}&size=2`)
    expect(first.body.data.map((token: Body) => token.id)).toEqual(ids.slice(0, 2))
    expect((await service.request('DELETE', `/tokens/${ids[1]}`, { key: revealer.key })).status).toBe(204)
    const rest = await pagesOf(`container=${container}&size=2`, revealer.key, first.body.pagination.next)
    expect(rest.flat()).toEqual(ids.slice(2))
  })

  it('filters by type, by container with those below it, and by fingerprint', async () => {
    const container = freshContainer()
    const number = card().number
    const [cardA] = await tokensIn(`${container}high/`, 1, { type: 'card', data: { number } })
    const [cardB] = await tokensIn(container, 1, { type: 'card', data: { number } })
    const [text] = await tokensIn(container, 1, { type: 'token', data: 'text' })
    const ids = async (query: string) => (await pagesOf(query)).flat()
    expect(await ids(`container=${container}`)).toEqual([text, cardB, cardA])
    expect(await ids(`container=${container}high/`)).toEqual([cardA])
    expect(await ids(`container=${container}&type=card`)).toEqual([cardB, cardA])
    expect(await ids(`container=${container}&type=bank`)).toEqual([])
    const { fingerprint } = (await service.request('GET', `/tokens/${cardA}`, { key: revealer.key })).body
    expect(await ids(`fingerprint=${fingerprint}`)).toEqual([cardB, cardA])
    expect(await ids(`fingerprint=${fingerprint}&container=${container}high/`)).toEqual([cardA])
    expect(await ids('fingerprint=not-a-fingerprint')).toEqual([])
  })

  it('filters by metadata as JSON text (as the SDK sends it) and as metadata.<key> parameters, exactly and case-sensitively', async () => {
    const batch = randomUUID()
    const container = freshContainer()
    const [red] = await tokensIn(container, 1, { metadata: { batch, colour: 'Red', size: 'L' } })
    const [lower] = await tokensIn(container, 1, { metadata: { batch, colour: 'red', size: 'L' } })
    const [small] = await tokensIn(container, 1, { metadata: { batch, colour: 'Red', size: 'S' } })
    const ids = async (query: string) => (await pagesOf(query)).flat()
    const json = (filters: Body) => `metadata=${encodeURIComponent(JSON.stringify(filters))}`
    expect(await ids(json({ batch, colour: 'Red' }))).toEqual([small, red])
    expect(await ids(json({ batch, colour: 'red' }))).toEqual([lower])
    expect(await ids(json({ batch, colour: 'RED' }))).toEqual([])
    expect(await ids(`metadata.batch=${batch}&metadata.colour=Red&metadata.size=L`)).toEqual([red])
    expect(await ids(`${json({ batch })}&metadata.size=S`)).toEqual([small])
    expect(await ids(`${json({ batch })}&type=card`)).toEqual([])
    expect(await ids(`${json({ batch, colour: 'Red' })}&size=1`)).toEqual([small, red])
  })

  it('passes over values in another case without short or empty pages: next only when a token follows', async () => {
    const batch = randomUUID()
    const container = freshContainer()
    const exact: string[] = []
    for (let i = 0; i < 9; i++) {
      const [id] = await tokensIn(container, 1, { metadata: { batch, colour: i % 3 === 0 ? 'Red' : 'red' } })
      if (i % 3 === 0) exact.push(id)
    }
    const pages = await pagesOf(`metadata.batch=${batch}&metadata.colour=Red&size=1`)
    expect(pages).toEqual([...exact].reverse().map((id) => [id]))
  })

  it('leaves out tokens the caller may not read and shows each under its transform', async () => {
    const container = freshContainer()
    const number = card().number
    const [outside] = await tokensIn(container, 1, { type: 'card', data: { number } })
    const [inside] = await tokensIn(`/pci${container}`, 1, { type: 'card', data: { number } })
    const { fingerprint } = (await service.request('GET', `/tokens/${inside}`, { key: revealer.key })).body
    const pci = await listV2(`fingerprint=${fingerprint}`, pciOnly.key)
    expect(pci.body.data.map((token: Body) => [token.id, token.data])).toEqual([[inside, { number }]])
    const redacted = await listV2(`fingerprint=${fingerprint}`, redactor.key)
    expect(redacted.body.data.map((token: Body) => [token.id, token.data])).toEqual([
      [inside, undefined],
      [outside, undefined]
    ])
    expect((await listV2('', creator.key)).status).toBe(403)
  })

  it('pages through only what a rule-bound caller may read', async () => {
    const container = freshContainer()
    const reader = await service.createApplication({ name: 'Reader', type: 'private', rules: [rule(1, `${container}high/`, 'reveal', ['token:read'])] })
    const visible: string[] = []
    for (let i = 0; i < 4; i++) {
      await tokensIn(container, 1)
      visible.push(...(await tokensIn(`${container}high/`, 1)))
    }
    const pages = await pagesOf(`container=${container}&size=3`, reader.key)
    expect(pages.flat()).toEqual([...visible].reverse())
  })

  it('logs each token it lists as a read', async () => {
    const container = freshContainer()
    const [id] = await tokensIn(container, 1)
    await listV2(`container=${container}`)
    expect((await logsOf(id)).map((entry) => [entry.operation, entry.message])).toContainEqual(['read', 'Token listed'])
  })

  it('gives cursors that hold no token data and refuses malformed or forged ones, naming start', async () => {
    const container = freshContainer()
    await tokensIn(container, 3, { data: 'Sensitive Value', metadata: { secretish: 'Visible Value' } })
    const first = await listV2(`container=${container}&size=1`)
    const next: string = first.body.pagination.next
    const decoded = Buffer.from(next.split('.')[0], 'base64url').toString()
    expect(decoded).not.toContain('Sensitive Value')
    expect(decoded).not.toContain('Visible Value')
    const [payload, mac] = next.split('.')
    const position = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const forged = `${Buffer.from(JSON.stringify([position[0] + 1, position[1]])).toString('base64url')}.${mac}`
    for (const start of ['garbage', `${payload}.`, `${payload}.${mac}.x`, forged, `${payload}.${'0'.repeat(mac.length)}`, `${payload}.é${mac.slice(2)}`]) {
      const response = await listV2(`container=${container}&start=${encodeURIComponent(start)}`)
      expect(response.status, start).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['start'])
    }
  })

  it('refuses bad parameters with a 400 naming them', async () => {
    const cases: [string, string][] = [
      ['size=0', 'size'],
      ['size=101', 'size'],
      ['size=ten', 'size'],
      ['container=pci', 'container'],
      ['metadata=not-json', 'metadata'],
      ['metadata=%5B%5D', 'metadata'],
      [`metadata=${encodeURIComponent('{"k":1}')}`, 'metadata.k'],
      ['type=card&type=bank', 'type'],
      ['colour=red', 'colour']
    ]
    for (const [query, field] of cases) {
      const response = await listV2(query)
      expect(response.status, query).toBe(400)
      expect(Object.keys(response.body.errors), query).toEqual([field])
    }
  })
})
