/**
 * `client.tokens.detokenize(body)` of Basis Theory's official SDK against Tessera,
 * with nothing but the base URL and an API key.
 */
import { BasisTheoryClient } from '@basis-theory/node-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../helpers/service'

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' }
const revealAll = (permissions: string[]) => [{ priority: 1, container: '/', transform: 'reveal', permissions }]

describe('detokenize with the Basis Theory SDK', () => {
  let service: TestService
  /** Reveals every token. */
  let revealer: BasisTheoryClient
  /** Plain token:read: the implicit transform masks. */
  let masker: BasisTheoryClient
  /** May read only tokens under /pci/. */
  let pciReader: BasisTheoryClient
  let cardId: string
  let textId: string
  let objectId: string

  const clientFor = async (application: Record<string, unknown>) => {
    const { key } = await service.createApplication({ type: 'private', ...application })
    return new BasisTheoryClient({ apiKey: key, environment: service.url })
  }

  beforeAll(async () => {
    service = await startTestService()
    revealer = await clientFor({ name: 'Revealer', rules: revealAll(['token:create', 'token:read']) })
    masker = await clientFor({ name: 'Masker', permissions: ['token:read'] })
    pciReader = await clientFor({ name: 'PCI reader', rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] }] })
    cardId = (await revealer.tokens.create({ type: 'card', data: CARD, containers: ['/pci/'] })).id!
    textId = (await revealer.tokens.create({ type: 'token', data: 'Sensitive Value', containers: ['/general/'] })).id!
    objectId = (await revealer.tokens.create({ type: 'token', data: { name: 'Ada', age: 36, vip: true } })).id!
  })
  afterAll(() => service.stop())

  it('replaces {{ ID }} by the token data, keeping its JSON type', async () => {
    const result = await revealer.tokens.detokenize({ text: `{{ ${textId} }}`, object: `{{${objectId}}}`, card: `{{ ${cardId} }}` })
    expect(result).toEqual({ text: 'Sensitive Value', object: { name: 'Ada', age: 36, vip: true }, card: CARD })
  })

  it('replaces {{ token: ID }} by the token object, as GET /tokens/{id} shows it', async () => {
    const result = (await revealer.tokens.detokenize({ token: `{{ token: ${textId} }}` })) as { token: Record<string, unknown> }
    const read = await revealer.tokens.get(textId)
    expect(result.token).toMatchObject({ id: textId, type: 'token', data: 'Sensitive Value', containers: ['/general/'] })
    expect(result.token.fingerprint).toBe(read.fingerprint)
  })

  it('applies filters to the data and to the token object', async () => {
    const result = await revealer.tokens.detokenize({
      last4: `{{ ${cardId} | json: '$.number' | last4 }}`,
      masked: `{{ ${cardId} | json: '$.number' | card_mask }}`,
      month: `{{ ${cardId} | json: '$.expiration_month' }}`,
      age: `{{ ${objectId} | json: '$.age' | to_string }}`,
      type: `{{ token: ${cardId} | json: '$.type' }}`
    })
    expect(result).toEqual({ last4: '4242', masked: '424242XXXXXX4242', month: 12, age: '36', type: 'card' })
  })

  it('walks nested objects and arrays and leaves other values alone', async () => {
    const result = await revealer.tokens.detokenize({
      order: { items: [`{{ ${textId} }}`, 7, null, { deep: [`{{ ${objectId} | json: '$.name' }}`] }], paid: true },
      note: 'no expressions here'
    })
    expect(result).toEqual({ order: { items: ['Sensitive Value', 7, null, { deep: ['Ada'] }], paid: true }, note: 'no expressions here' })
  })

  it('writes values into mixed text, objects as JSON', async () => {
    const result = await revealer.tokens.detokenize({
      line: `Card ending {{ ${cardId} | json: '$.number' | last4 }}, exp {{ ${cardId} | json: '$.expiration_month' }}/{{ ${cardId} | json: '$.expiration_year' }}`,
      json: `data={{ ${objectId} }}`
    })
    expect(result).toEqual({ line: 'Card ending 4242, exp 12/2030', json: 'data={"name":"Ada","age":36,"vip":true}' })
  })

  it("shows the data under the caller's transform: a masking caller gets the masked card", async () => {
    const result = await masker.tokens.detokenize({ card: `{{ ${cardId} }}`, number: `{{ ${cardId} | json: '$.number' }}` })
    expect(result).toEqual({ card: { number: 'XXXXXXXXXXXX4242', expiration_month: 12, expiration_year: 2030 }, number: 'XXXXXXXXXXXX4242' })
  })

  it('refuses an unknown token id with 400 (BadRequestError) naming the field', async () => {
    const refusal = revealer.tokens.detokenize({ nested: { value: '{{ no-such-token }}' } })
    await expect(refusal).rejects.toMatchObject({ statusCode: 400, body: { errors: { 'nested.value': ['names a token that does not exist'] } } })
  })

  it('refuses a token the caller may not read with 403 (ForbiddenError)', async () => {
    await expect(pciReader.tokens.detokenize({ card: `{{ ${cardId} | json: '$.number' }}` })).resolves.toEqual({ card: CARD.number })
    await expect(pciReader.tokens.detokenize({ card: `{{ ${cardId} }}`, text: `{{ ${textId} }}` })).rejects.toMatchObject({ statusCode: 403 })
  })

  it('audits each token read once, however many expressions name it', async () => {
    const detokenizations = async () => {
      const logs = await service.request('GET', `/logs?entity_id=${objectId}&size=100`)
      return logs.body.data.filter((entry: { message: string }) => entry.message === 'Token detokenized')
    }
    const before = (await detokenizations()).length
    await revealer.tokens.detokenize([`{{ ${objectId} }}`, `{{ token: ${objectId} }}`])
    const after = await detokenizations()
    expect(after.length - before).toBe(1)
    expect(after[0]).toMatchObject({ entity_id: objectId, operation: 'read' })
  })
})
