/** Basis Theory's v2 token search: POST /v2/tokens/search (the grammar, each field, cursor pages, access, bad input, audit). */
import { randomBytes, randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { card, create, logsOf, masker, revealer, rule, service, useTokensService, type App, type Body } from './fixture'

useTokensService()

/** Searches every container, revealing. */
let searcher: App
/** Searches `/pci/` only, masking. */
let pciSearcher: App

beforeAll(async () => {
  searcher = await service.createApplication({ name: 'Searcher', type: 'private', rules: [rule(1, '/', 'reveal', ['token:search'])] })
  pciSearcher = await service.createApplication({ name: 'PCI searcher', type: 'private', rules: [rule(1, '/pci/', 'mask', ['token:search'])] })
})

const search = (body: unknown, key = searcher.key) => service.request('POST', '/v2/tokens/search', { key, body })

/** The ids a query finds, following `next` to the end. */
async function found(query: string, key = searcher.key, size?: number): Promise<string[]> {
  const ids: string[] = []
  let start: string | undefined
  for (let pages = 0; pages < 50; pages++) {
    const response = await search({ query, start, size }, key)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    ids.push(...response.body.data.map((token: Body) => token.id))
    start = response.body.pagination.next
    if (start === undefined) return ids
  }
  throw new Error('the search never ended')
}

const freshContainer = () => `/s-${randomBytes(6).toString('hex')}/`

/** Creates a token one clock second after the last; its id. */
async function token(body: Body): Promise<string> {
  service.clock.advance(1000)
  return (await create({ type: 'token', data: randomUUID(), ...body })).id
}

describe('POST /v2/tokens/search', () => {
  it('finds tokens by data, exactly, through their search indexes (quoted or not)', async () => {
    const word = `w${randomBytes(6).toString('hex')}`
    const phrase = `Sensitive ${word}`
    const container = freshContainer()
    const first = await token({ data: phrase, search_indexes: ['{{ data }}'], containers: [container] })
    const second = await token({ data: { name: phrase, code: word }, search_indexes: ['{{ data.name }}', '{{ data.code }}'], containers: [container] })
    await token({ data: phrase, containers: [container] })
    expect(await found(`data:"${phrase}"`)).toEqual([second, first])
    expect(await found(`data:${word}`)).toEqual([second])
    expect(await found(`data:"${phrase.toLowerCase()}"`)).toEqual([])
    expect(await found(`data:Sensitive`)).toEqual([])
  })

  it('finds a card by the last four digits its search index renders', async () => {
    const number = card().number
    const id = await token({ type: 'card', data: { number }, search_indexes: ['{{ data.number | last4 }}', '{{ data.number }}'] })
    expect(await found(`data:${number}`)).toEqual([id])
    expect(await found(`data:${number.slice(-4)} AND container:/pci/`)).toContain(id)
  })

  it('lists a token once even when two of its search indexes render the same value', async () => {
    const value = `v${randomBytes(6).toString('hex')}`
    const id = await token({ data: value, search_indexes: ['{{ data }}', '{{ data | to_string }}'] })
    expect(await found(`data:${value}`)).toEqual([id])
    const onePerPage = await search({ query: `data:${value}`, size: 1 })
    expect(onePerPage.body).toMatchObject({ pagination: { page_size: 1 }, data: [{ id }] })
    expect(onePerPage.body.pagination).not.toHaveProperty('next')
  })

  it('finds tokens by type, fingerprint, container with those below it, and exact case-sensitive metadata', async () => {
    const container = freshContainer()
    const batch = randomUUID()
    const number = card().number
    const cardA = await token({ type: 'card', data: { number }, containers: [`${container}high/`], metadata: { batch, colour: 'Red' } })
    const cardB = await token({ type: 'card', data: { number }, containers: [container], metadata: { batch, colour: 'red' } })
    const text = await token({ containers: [container], metadata: { batch, colour: 'Red' } })
    expect(await found(`container:${container}`)).toEqual([text, cardB, cardA])
    expect(await found(`container:${container}high/`)).toEqual([cardA])
    expect(await found(`type:card AND container:${container}`)).toEqual([cardB, cardA])
    expect(await found(`container:${container} AND type:token`)).toEqual([text])
    const { fingerprint } = (await service.request('GET', `/tokens/${cardA}`, { key: revealer.key })).body
    expect(await found(`fingerprint:${fingerprint}`)).toEqual([cardB, cardA])
    expect(await found(`metadata.batch:${batch}`)).toEqual([text, cardB, cardA])
    expect(await found(`metadata.colour:Red AND container:${container}`)).toEqual([text, cardA])
    expect(await found(`metadata.colour:"red" AND container:${container}`)).toEqual([cardB])
    expect(await found(`metadata.colour:RED AND container:${container}`)).toEqual([])
  })

  it('pages to the end: every token exactly once, next absent on the last page', async () => {
    const container = freshContainer()
    const ids: string[] = []
    for (let i = 0; i < 7; i++) ids.push(await token({ containers: [container] }))
    const first = await search({ query: `container:${container}`, size: 3 })
    expect(first.body.pagination).toEqual({ page_size: 3, next: expect.any(String) })
    expect(await found(`container:${container}`, searcher.key, 3)).toEqual([...ids].reverse())
    expect((await search({ query: `container:${container}`, size: 7 })).body.pagination).toEqual({ page_size: 7 })
  })

  it('shows tokens under the transform of the token:search grant, leaves out the others, and needs token:search', async () => {
    const container = freshContainer()
    const number = card().number
    const outside = await token({ type: 'card', data: { number }, containers: [container] })
    const inside = await token({ type: 'card', data: { number }, containers: [`/pci${container}`] })
    const { fingerprint } = (await service.request('GET', `/tokens/${inside}`, { key: revealer.key })).body
    const pci = await search({ query: `fingerprint:${fingerprint}` }, pciSearcher.key)
    expect(pci.body.data.map((found: Body) => [found.id, found.data])).toEqual([[inside, { number: 'X'.repeat(12) + number.slice(-4) }]])
    const all = await search({ query: `fingerprint:${fingerprint}` })
    expect(all.body.data.map((found: Body) => [found.id, found.data])).toEqual([
      [inside, { number }],
      [outside, { number }]
    ])
    // Reading is not searching.
    expect((await search({ query: `fingerprint:${fingerprint}` }, masker.key)).status).toBe(403)
    expect((await search({ query: `fingerprint:${fingerprint}` }, revealer.key)).status).toBe(403)
  })

  it('logs each token it finds as a read', async () => {
    const container = freshContainer()
    const id = await token({ containers: [container] })
    await found(`container:${container}`)
    expect((await logsOf(id)).map((entry) => [entry.operation, entry.message])).toContainEqual(['read', 'Token found by search'])
  })

  it('refuses what the v2 grammar does not take with a 400 naming query, without repeating the query', async () => {
    const secret = '4242424242424242'
    const refused = [
      '',
      '   ',
      `data:${secret} OR type:card`,
      `data:${secret} || type:card`,
      `NOT data:${secret}`,
      `-data:${secret}`,
      `(data:${secret})`,
      `data:(${secret})`,
      `data:[${secret} TO 5]`,
      `data:{1 TO ${secret}}`,
      `data:${secret}*`,
      `data:4?42${secret}`,
      `data:${secret}~`,
      `number:${secret}`,
      `metadata:${secret}`,
      `metadata.:${secret}`,
      `data:"${secret}`,
      `data:${secret}"`,
      `data:"${secret}"x`,
      `data:"\\x${secret}"`,
      'data:',
      secret,
      `data:${secret} type:card`,
      `data:${secret} AND type:card`,
      `data:${secret} and container:/pci/`,
      `data:${secret} AND`,
      `container:/pci/ AND type:card AND data:${secret}`,
      `container:pci AND data:${secret}`
    ]
    for (const query of refused) {
      const response = await search({ query })
      expect(response.status, query).toBe(400)
      expect(Object.keys(response.body.errors), query).toEqual(['query'])
      expect(JSON.stringify(response.body), query).not.toContain(secret)
    }
  })

  it('takes quoted values with escaped quotes and backslashes, and wildcards inside quotes as text', async () => {
    const value = `a "quoted" \\ value * ? (x) ${randomBytes(4).toString('hex')}`
    const id = await token({ data: value, search_indexes: ['{{ data }}'] })
    const quoted = `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
    expect(await found(`data:${quoted}`)).toEqual([id])
    expect(await found(`  data:${quoted}   AND   container:/general/  `)).toEqual([id])
  })

  it('refuses a bad body, size or start with a 400 naming it', async () => {
    const cases: [unknown, string][] = [
      [{}, 'query'],
      [{ query: 7 }, 'query'],
      [{ query: 'type:card', size: 0 }, 'size'],
      [{ query: 'type:card', size: 101 }, 'size'],
      [{ query: 'type:card', size: 2.5 }, 'size'],
      [{ query: 'type:card', start: 'garbage' }, 'start'],
      [{ query: 'type:card', start: '' }, 'start'],
      [{ query: 'type:card', page: 2 }, 'page']
    ]
    for (const [body, field] of cases) {
      const response = await search(body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(Object.keys(response.body.errors), JSON.stringify(body)).toEqual([field])
    }
  })
})
