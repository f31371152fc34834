/**
 * Basis Theory's official SDK against Tessera, with nothing but the base URL and an API key:
 * `client.tokens.listV2` and `client.tokens.searchV2` paged with the SDK's own pager, and
 * `client.tokens.update` and `client.tokens.delete`.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { BasisTheory, BasisTheoryClient } from '@basis-theory/node-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'
import { cardNumber } from '../helpers/tokens'

const CRUD_AND_SEARCH = ['token:create', 'token:read', 'token:update', 'token:delete', 'token:search']

describe('token lists, search, update and delete with the Basis Theory SDK', () => {
  let service: TestService
  /** Reveals and may do everything with tokens. */
  let client: BasisTheoryClient
  /** Reads and searches only under /pci/, masked. */
  let pciClient: BasisTheoryClient
  /** May create tokens only. */
  let creator: BasisTheoryClient

  const clientFor = async (application: Record<string, unknown>) => {
    const { key } = await service.createApplication({ type: 'private', ...application })
    return new BasisTheoryClient({ apiKey: key, environment: service.url })
  }

  /** Every item of a pager, walked with the SDK's async iterator (it loads each next page itself). */
  async function all(pager: Promise<AsyncIterable<BasisTheory.Token>>): Promise<BasisTheory.Token[]> {
    const tokens: BasisTheory.Token[] = []
    for await (const token of await pager) tokens.push(token)
    return tokens
  }

  /** A container of its own, so that a test sees only its tokens. */
  const freshContainer = () => `/sdk-${randomBytes(6).toString('hex')}/`

  /** Creates `count` tokens one after the other; their ids, newest first. */
  async function tokensIn(container: string, count: number, request: Partial<BasisTheory.CreateTokenRequest> = {}): Promise<string[]> {
    const ids: string[] = []
    for (let i = 0; i < count; i++) ids.push((await client.tokens.create({ type: 'token', data: `value ${i}`, containers: [container], ...request })).id!)
    return ids
  }

  beforeAll(async () => {
    service = await startTestService()
    client = await clientFor({ name: 'SDK', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: CRUD_AND_SEARCH }] })
    pciClient = await clientFor({ name: 'PCI', rules: [{ priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read', 'token:search'] }] })
    creator = await clientFor({ name: 'Creator', permissions: ['token:create'] })
  })
  afterAll(() => service.stop())

  describe('tokens.listV2', () => {
    it('pages through every token exactly once with the SDK pager, and stops after the last page', async () => {
      const container = freshContainer()
      const ids = await tokensIn(container, 7)
      const listed = await all(client.tokens.listV2({ container, size: 2 }))
      expect(new Set(listed.map((token) => token.id))).toEqual(new Set(ids))
      expect(listed).toHaveLength(7)
      expect(listed.map((token) => token.data)).toEqual(expect.arrayContaining(['value 0', 'value 6']))
    })

    it('gives pages with getNextPage and hasNextPage', async () => {
      const container = freshContainer()
      await tokensIn(container, 3)
      const page = await client.tokens.listV2({ container, size: 2 })
      expect(page.data).toHaveLength(2)
      expect(page.hasNextPage()).toBe(true)
      await page.getNextPage()
      expect(page.data).toHaveLength(1)
      expect(page.hasNextPage()).toBe(false)
    })

    it('filters by type, container, fingerprint and metadata (exact)', async () => {
      const container = freshContainer()
      const number = cardNumber()
      const batch = randomUUID()
      const cardA = await client.tokens.create({ type: 'card', data: { number }, containers: [`${container}high/`], metadata: { batch, colour: 'Red' } })
      const cardB = await client.tokens.create({ type: 'card', data: { number }, containers: [container], metadata: { batch, colour: 'red' } })
      await client.tokens.create({ type: 'token', data: 'text', containers: [container], metadata: { batch, colour: 'Red' } })
      const ids = async (request: BasisTheory.TokensListV2Request) => (await all(client.tokens.listV2(request))).map((token) => token.id)
      expect(await ids({ container, type: 'card' })).toEqual([cardB.id, cardA.id])
      expect(await ids({ container: `${container}high/` })).toEqual([cardA.id])
      expect(await ids({ fingerprint: cardA.fingerprint })).toEqual([cardB.id, cardA.id])
      expect(await ids({ metadata: { batch, colour: 'Red' }, type: 'card' })).toEqual([cardA.id])
      expect(await ids({ metadata: { batch, colour: 'RED' } })).toEqual([])
    })

    it('shows only what the caller may read, masked as its rule says', async () => {
      const container = freshContainer()
      const number = cardNumber()
      const outside = await client.tokens.create({ type: 'card', data: { number }, containers: [container] })
      const inside = await client.tokens.create({ type: 'card', data: { number }, containers: [`/pci${container}`] })
      const listed = await all(pciClient.tokens.listV2({ fingerprint: outside.fingerprint }))
      expect(listed.map((token) => [token.id, token.data])).toEqual([[inside.id, { number: 'X'.repeat(12) + number.slice(-4) }]])
    })

    it('throws ForbiddenError without token:read and BadRequestError for a bad start', async () => {
      await expect(creator.tokens.listV2()).rejects.toBeInstanceOf(BasisTheory.ForbiddenError)
      await expect(client.tokens.listV2({ start: 'not-a-cursor' })).rejects.toMatchObject({ statusCode: 400 })
    })
  })

  describe('tokens.searchV2', () => {
    it('finds tokens by their search index values and pages to the end with the SDK pager', async () => {
      const container = freshContainer()
      const word = `w${randomBytes(6).toString('hex')}`
      const ids = await tokensIn(container, 5, { data: { code: word }, searchIndexes: ['{{ data.code }}'] })
      await tokensIn(container, 2)
      const found = await all(client.tokens.searchV2({ query: `data:${word}`, size: 2 }))
      expect(found.map((token) => token.id).sort()).toEqual([...ids].sort())
      expect(found[0].data).toEqual({ code: word })
    })

    it('searches by container with another term, and by exact metadata', async () => {
      const container = freshContainer()
      const batch = randomUUID()
      const card = await client.tokens.create({ type: 'card', data: { number: cardNumber() }, containers: [container], metadata: { batch } })
      await client.tokens.create({ type: 'token', data: 'x', containers: [container], metadata: { batch } })
      expect((await all(client.tokens.searchV2({ query: `type:card AND container:${container}` }))).map((token) => token.id)).toEqual([card.id])
      expect(await all(client.tokens.searchV2({ query: `metadata.batch:"${batch}" AND type:card` })).catch((error) => error)).toBeInstanceOf(BasisTheory.BadRequestError)
      expect(await all(client.tokens.searchV2({ query: `metadata.batch:"${batch}"` }))).toHaveLength(2)
    })

    it('throws BadRequestError naming query for what the grammar does not take, ForbiddenError without token:search', async () => {
      const refused = await client.tokens.searchV2({ query: 'type:card OR type:bank' }).catch((error) => error)
      expect(refused).toBeInstanceOf(BasisTheory.BadRequestError)
      expect(refused.body.errors).toHaveProperty('query')
      await expect(creator.tokens.searchV2({ query: 'type:card' })).rejects.toBeInstanceOf(BasisTheory.ForbiddenError)
    })

    it('shows only what the caller may search, masked as its rule says', async () => {
      const container = freshContainer()
      const number = cardNumber()
      await client.tokens.create({ type: 'card', data: { number }, containers: [container], searchIndexes: ['{{ data.number }}'] })
      const inside = await client.tokens.create({ type: 'card', data: { number }, containers: [`/pci${container}`], searchIndexes: ['{{ data.number }}'] })
      const found = await all(pciClient.tokens.searchV2({ query: `data:${number}` }))
      expect(found.map((token) => [token.id, token.data])).toEqual([[inside.id, { number: 'X'.repeat(12) + number.slice(-4) }]])
    })
  })

  describe('tokens.update and tokens.delete', () => {
    it('updates a token with a merge patch: metadata merges, data is replaced and re-indexed', async () => {
      const token = await client.tokens.create({ type: 'token', data: { name: 'Ada' }, metadata: { a: '1', b: '2' }, searchIndexes: ['{{ data.name }}'] })
      const updated = await client.tokens.update(token.id!, { data: { name: 'Grace' }, metadata: { b: undefined, c: '3' } })
      expect(updated).toMatchObject({ id: token.id, data: { name: 'Grace' }, metadata: { a: '1', b: '2', c: '3' } })
      const removed = await client.tokens.update(token.id!, { metadata: { b: null } as unknown as Record<string, string> })
      expect(removed.metadata).toEqual({ a: '1', c: '3' })
      expect((await client.tokens.get(token.id!)).data).toEqual({ name: 'Grace' })
      expect((await all(client.tokens.searchV2({ query: 'data:Grace' }))).map((found) => found.id)).toContain(token.id)
      expect((await all(client.tokens.searchV2({ query: 'data:Ada' }))).map((found) => found.id)).not.toContain(token.id)
    })

    it('refuses an update without token:update (ForbiddenError) and of an unknown token (NotFoundError)', async () => {
      const token = await creator.tokens.create({ type: 'token', data: 'x' })
      await expect(creator.tokens.update(token.id!, { metadata: { a: '1' } })).rejects.toBeInstanceOf(BasisTheory.ForbiddenError)
      await expect(client.tokens.update(randomUUID(), { metadata: { a: '1' } })).rejects.toBeInstanceOf(BasisTheory.NotFoundError)
    })

    it('deletes a token: it is then not found, nor listed, nor found by search', async () => {
      const container = freshContainer()
      const [id] = await tokensIn(container, 1, { searchIndexes: ['{{ data }}'] })
      await client.tokens.delete(id)
      await expect(client.tokens.get(id)).rejects.toBeInstanceOf(BasisTheory.NotFoundError)
      await expect(client.tokens.delete(id)).rejects.toBeInstanceOf(BasisTheory.NotFoundError)
      expect(await all(client.tokens.listV2({ container }))).toEqual([])
      expect(await all(client.tokens.searchV2({ query: `container:${container}` }))).toEqual([])
    })
  })
})
