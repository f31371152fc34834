/**
 * Expressions never show more than the caller may see, and what they cost is bounded per
 * request: the attacks found against ids, masks and expression counts, through HTTP.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXPRESSION_LIMITS } from '../../../src/main/domain/expressions'
import { sql } from '../../../src/main/storage/connections'
import { startTestService, type TestService } from '../../helpers/service'
import { cardNumber, MERGE_PATCH } from '../../helpers/tokens'

const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']
const rule = (container: string, transform: string, permissions: string[]) => ({ priority: 1, container, transform, permissions })
const masked = (number: string) => 'X'.repeat(number.length - 4) + number.slice(-4)
const reversed = (text: string) => [...text].reverse().join('')

type App = { id: string; key: string }
type Body = Record<string, any>

describe('expressions', () => {
  let service: TestService
  /** A public application: token:create and token:update only (the checkout page). */
  let publicApp: App
  /** Plain token:* permissions: every transform masks. */
  let masker: App
  /** A rule on `/` that reveals. */
  let revealer: App
  /** Reveals on update only; reads masked. */
  let revealingUpdater: App

  beforeAll(async () => {
    service = await startTestService()
    publicApp = await service.createApplication({ name: 'Checkout', type: 'public', permissions: ['token:create', 'token:update'] })
    masker = await service.createApplication({ name: 'Masker', type: 'private', permissions: CRUD })
    revealer = await service.createApplication({ name: 'Revealer', type: 'private', rules: [rule('/', 'reveal', CRUD)] })
    revealingUpdater = await service.createApplication({
      name: 'Updater',
      type: 'private',
      rules: [rule('/', 'reveal', ['token:update']), rule('/', 'mask', ['token:create', 'token:read'])]
    })
  })
  afterAll(() => service.stop())

  const path = (id: string) => `/tokens/${encodeURIComponent(id)}`
  const post = (body: unknown, key = revealer.key) => service.request('POST', '/tokens', { key, body })
  const tokenize = (body: unknown, key = revealer.key) => service.request('POST', '/tokenize', { key, body })
  const patch = (id: string, body: unknown, key: string) => service.request('PATCH', path(id), { key, body, contentType: MERGE_PATCH })
  const get = (id: string, key = masker.key) => service.request('GET', path(id), { key })

  async function create(body: Body, key = revealer.key): Promise<Body & { id: string }> {
    const response = await post(body, key)
    expect(response.status, JSON.stringify(response.body)).toBe(201)
    return response.body
  }

  async function logsOf(entityId: string): Promise<Body[]> {
    const response = await service.request('GET', `/logs?entity_id=${encodeURIComponent(entityId)}&size=100`)
    expect(response.status).toBe(200)
    return response.body.data
  }

  async function totalTokens(): Promise<number> {
    return (await service.request('GET', '/tokens?size=1', { key: masker.key })).body.pagination.total_items
  }

  describe('changing a mask', () => {
    it('refuses a public application a mask showing the card number and CVC, and every masking reader keeps the mask', async () => {
      const number = cardNumber()
      const { id } = await create({ type: 'card', data: { number, cvc: '321', expiration_month: 12, expiration_year: 2031 } })
      const attack = await patch(id, { mask: { n: '{{ data.number }}', c: '{{ data.cvc }}' } }, publicApp.key)
      expect(attack.status).toBe(403)
      expect(attack.headers.get('content-type')).toContain('application/problem+json')
      expect(attack.body.detail).toContain('mask.n')
      expect(JSON.stringify(attack.body)).not.toContain(number)
      const read = await get(id)
      expect(read.body.data).toEqual({ number: masked(number), expiration_month: 12, expiration_year: 2031 })
      const listed = await service.request('GET', `/tokens?id=${encodeURIComponent(id)}`, { key: masker.key })
      expect(JSON.stringify(listed.body)).not.toContain(number)
      expect((await logsOf(id)).map((entry) => entry.operation)).not.toContain('update')
    })

    it('refuses the same change to a private application that reads and updates masked', async () => {
      const { id } = await create({ type: 'token', data: { pin: '8264', name: 'Ada' }, mask: { name: '{{ data.name | reveal_last: 1 }}' } })
      for (const mask of [{ pin: '{{ data.pin }}' }, { pin: '{{ data.pin | reveal: 100, 0 }}' }, { pin: '{% if data.pin contains "8" %}8{% endif %}' }, '{{ data | stringify }}']) {
        const response = await patch(id, { mask }, masker.key)
        expect(response.status, JSON.stringify(mask)).toBe(403)
      }
      expect((await get(id)).body.data).toEqual({ name: 'XXa' })
    })

    it('lets a public application resend a mask leaf that already showed data as is: that is no change', async () => {
      const { id } = await create({ type: 'token', data: { name: 'Ada', pin: '8264' }, mask: { name: '{{ data.name }}' } })
      const response = await patch(id, { mask: { name: '{{ data.name }}', pin: 'hidden' } }, publicApp.key)
      expect(response.status).toBe(200)
      expect((await get(id)).body.data).toEqual({ name: 'Ada', pin: 'hidden' })
      expect((await patch(id, { mask: { pin: '{{ data.name }}' } }, publicApp.key)).status).toBe(403)
    })

    it('never reveals to a public application, whatever rule it has stored', async () => {
      const browser = await service.createApplication({ name: 'Old browser', type: 'public', rules: [rule('/', 'mask', ['token:update'])] })
      const reveal = JSON.stringify([rule('/', 'reveal', ['token:update'])])
      await service.host.vault.services.context.writes.run((trx) => sql(trx)('applications').where('id', browser.id).update({ rules: reveal }))
      const number = cardNumber()
      const { id } = await create({ type: 'card', data: { number, expiration_month: 1, expiration_year: 2032, cvc: '987' } })
      const response = await patch(id, { metadata: { seen: 'yes' } }, browser.key)
      expect(response.status).toBe(200)
      expect(response.body.data).toEqual({ number: masked(number), expiration_month: 1, expiration_year: 2032 })
    })

    it('refuses a caller that may not reveal a masking window on data whose length the type does not bound: a short value shows whole', async () => {
      const { id } = await create({ type: 'token', data: { pin: '4921', ssn: '123-45-6789', secret: 'sk_live_abcdefghijklmnop' } })
      for (const mask of [{ pin: '{{ data.pin | last4 }}' }, { ssn: '{{ data.ssn | reveal: 8, 4 }}' }, { s: '{{ data.secret | reveal_last: 4 }}' }]) {
        const response = await patch(id, { mask }, publicApp.key)
        expect(response.status).toBe(403)
        expect(JSON.stringify(response.body)).not.toMatch(/4921|6789|mnop/)
      }
      const whole = await create({ type: 'token', data: '078-05-1120' })
      expect((await patch(whole.id, { mask: '{{ data | reveal: 8, 4 }}' }, publicApp.key)).status).toBe(403)
      expect((await get(whole.id)).body.data).not.toBe('078-05-1120')
      expect((await patch(id, { mask: { pin: '{{ data.pin | last4 }}' } }, revealer.key)).status).toBe(200)
    })

    it('lets a public application change a mask that only masks, and shows it masked', async () => {
      const number = cardNumber()
      const { id } = await create({ type: 'card', data: { number, expiration_month: 1, expiration_year: 2032 } })
      const response = await patch(id, { mask: { number: '{{ data.number | card_mask }}' } }, publicApp.key)
      expect(response.status).toBe(200)
      const view = { number: number.slice(0, 6) + 'XXXXXX' + number.slice(-4), expiration_month: 1, expiration_year: 2032 }
      expect(response.body.mask).toEqual(view)
      expect((await get(id)).body.data).toEqual(view)
    })

    it('lets a caller that may reveal the token set a mask showing generic data as is', async () => {
      for (const key of [revealer.key, revealingUpdater.key]) {
        const { id } = await create({ type: 'token', data: { name: 'Grace' }, mask: { name: '{{ data.name | reveal_last: 1 }}' } })
        expect((await patch(id, { mask: { name: '{{ data.name }}' } }, key)).status).toBe(200)
        expect((await get(id)).body.data).toEqual({ name: 'Grace' })
      }
    })

    it('refuses every caller, revealing ones included, a card or bank mask beyond the PCI display maximum, naming the leaves', async () => {
      const card = await create({ type: 'card', data: { number: cardNumber(), cvc: '123' } })
      const response = await patch(card.id, { mask: { number: '{{ data.number | reveal: 8, 4 }}', cvc: '{{ data.cvc | last4 }}' } }, revealer.key)
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors).sort()).toEqual(['mask.cvc', 'mask.number'])
      const bank = await create({ type: 'bank', data: { routing_number: '021000021', account_number: '123456789' } })
      const account = await patch(bank.id, { mask: { account_number: '{{ data.account_number | card_mask }}' } }, revealer.key)
      expect(account.status).toBe(400)
      expect(Object.keys(account.body.errors)).toEqual(['mask.account_number'])
    })

    it('refuses a fingerprint_expression change to a caller that may not reveal: the fingerprint of one digit would tell it', async () => {
      const created = await create({ type: 'card', data: { number: cardNumber() } })
      const probe = await patch(created.id, { fingerprint_expression: '{{ data.number | slice: 6, 1 }}' }, publicApp.key)
      expect(probe.status).toBe(403)
      expect((await service.request('GET', path(created.id), { key: revealer.key })).body.fingerprint).toBe(created.fingerprint)
      expect((await patch(created.id, { fingerprint_expression: '{{ data.number | slice: 6, 1 }}' }, revealer.key)).status).toBe(200)
    })

    it('refuses a search_indexes change to a caller that may not reveal: a search for each digit would tell the number', async () => {
      const number = cardNumber()
      const created = await create({ type: 'card', data: { number }, search_indexes: ['{{ data.number | last4 }}'] })
      const probe = await patch(created.id, { search_indexes: ['{{ data.number | slice: 6, 1 }}'] }, publicApp.key)
      expect(probe.status).toBe(403)
      const searcher = await service.createApplication({ name: 'Searcher', type: 'private', permissions: ['token:search'] })
      const search = (query: string) => service.request('POST', '/v2/tokens/search', { key: searcher.key, body: { query } })
      expect((await search(`data:${number[6]}`)).body.data).toEqual([])
      // The same list sent again changes nothing, and a caller that may reveal may change it.
      expect((await patch(created.id, { search_indexes: ['{{ data.number | last4 }}'] }, publicApp.key)).status).toBe(200)
      expect((await patch(created.id, { search_indexes: ['{{ data.number | slice: 6, 1 }}'] }, revealer.key)).status).toBe(200)
      expect((await search(`data:${number[6]}`)).body.data.map((token: Body) => token.id)).toContain(created.id)
    })
  })

  describe('a mask set at create', () => {
    it('is the creator choice for generic data', async () => {
      const token = await create({ type: 'token', data: { name: 'Ada' }, mask: { name: '{{ data.name }}' } }, masker.key)
      expect(token.data).toEqual({ name: 'Ada' })
    })

    it('refuses a card mask showing more than the first 6 and last 4 digits, or the CVC, and creates nothing', async () => {
      const before = await totalTokens()
      for (const mask of [{ n: '{{ data.number }}' }, { n: '{{ data.number | card_bin }}' }, { c: '{{ data.cvc | alias_card }}' }]) {
        const response = await post({ type: 'card', data: { number: cardNumber(), cvc: '1234' }, mask }, revealer.key)
        expect(response.status, JSON.stringify(mask)).toBe(400)
        expect(Object.keys(response.body.errors)).toEqual([`mask.${Object.keys(mask)[0]}`])
      }
      const inTokenize = await tokenize({ a: { type: 'card', data: { number: cardNumber() }, mask: '{{ data.number | slice: 0, 12 }}' } })
      expect(inTokenize.status).toBe(400)
      expect(Object.keys(inTokenize.body.errors)).toEqual(['a.mask'])
      expect(await totalTokens()).toBe(before)
    })

    it('accepts card masks within the maximum', async () => {
      const number = cardNumber()
      const token = await create({ type: 'card', data: { number }, mask: { bin: '{{ data.number | reveal: 6, 0 }}', last: '{{ data.number | last4 }}' } }, masker.key)
      expect(token.mask).toEqual({ bin: number.slice(0, 6) + 'X'.repeat(10), last: number.slice(-4) })
    })
  })

  describe('id expressions', () => {
    it('refuses the reversed and the sliced card number with 400 naming id, and logs no such id', async () => {
      const number = cardNumber()
      const attacks = [`{{ data.number | split: "" | reverse | join: "" }}`, 'pan-{{ data.number | slice: 0, 15 }}']
      for (const id of attacks) {
        const response = await post({ id, type: 'card', data: { number } }, publicApp.key)
        expect(response.status, id).toBe(400)
        expect(Object.keys(response.body.errors)).toEqual(['id'])
        const nested = await tokenize({ card: { id, type: 'card', data: { number } } })
        expect(nested.status).toBe(400)
        expect(Object.keys(nested.body.errors)).toEqual(['card.id'])
      }
      const logs = await service.request('GET', '/logs?size=100')
      for (const secret of [number, reversed(number), number.slice(0, 15)]) expect(JSON.stringify(logs.body)).not.toContain(secret)
    })

    it('accepts ids that use the data only through alias filters', async () => {
      const number = cardNumber()
      const token = await create({ id: `card-{{ data.number | alias_card }}-${randomUUID()}`, type: 'card', data: { number } }, publicApp.key)
      expect(token.id).toMatch(/^card-4\d{15}-/)
      expect(token.id).not.toContain(number)
    })
  })

  describe('cost', () => {
    const nestedLoops = '{% for i in (1..99999) %}{% for j in (1..99999) %}{{ j }}{% endfor %}{% endfor %}'

    it('refuses a 4 KB mask of 50 leaves with nested loops, naming its leaves, and stays healthy', async () => {
      const mask = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`l${i}`, nestedLoops]))
      expect(JSON.stringify(mask).length).toBeLessThan(5_000)
      const response = await post({ type: 'token', data: 'x', mask })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain('mask.l0')
      expect((await service.request('GET', '/health', { key: null })).body).toEqual({ status: 'ok' })
    })

    it('lets the leaves of one mask share one evaluation: loops that each fit cannot add up', async () => {
      const loop = `{% for i in (1..${EXPRESSION_LIMITS.steps / 4}) %}{% endfor %}`
      expect((await post({ type: 'token', data: 'x', mask: { a: loop, b: loop } })).status).toBe(201)
      const mask = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`l${i}`, loop]))
      const response = await post({ type: 'token', data: 'x', mask })
      expect(response.status).toBe(400)
      expect(response.body.errors['mask.l49']).toEqual([`takes more than ${EXPRESSION_LIMITS.steps} steps to evaluate`])
    })

    it('refuses a token with more expressions than one token may carry, naming the field where the count ran over', async () => {
      const mask = Array.from({ length: EXPRESSION_LIMITS.perToken - 20 }, () => '{{ data | reveal_last: 1 }}')
      const search_indexes = Array.from({ length: 20 }, () => '{{ data }}')
      const response = await post({ type: 'token', data: 'x', mask, search_indexes, fingerprint_expression: '{{ data }}' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['mask'])
      expect(response.body.errors.mask[0]).toContain(`at most ${EXPRESSION_LIMITS.perToken} expressions`)
      const fits = await post({ type: 'token', data: 'x', mask: mask.slice(1), search_indexes, fingerprint_expression: '{{ data }}' })
      expect(fits.status).toBe(201)
      const patched = await patch(fits.body.id, { mask: [...mask.slice(1), '{{ data | last4 }}'] }, revealer.key)
      expect(patched.status).toBe(400)
      expect(Object.keys(patched.body.errors)).toEqual(['mask'])
    })

    it('refuses a /tokenize body with more expressions than one request may carry, before evaluating any', async () => {
      const before = await totalTokens()
      const perToken = 50
      const count = Math.floor(EXPRESSION_LIMITS.perRequest / perToken) + 1
      // Each search index takes most of an evaluation's steps: evaluated, they would run out of time long before.
      const heavy = Array.from({ length: 20 }, (_, i) => `{% for i in (1..300) %}{% endfor %}${i}`)
      const mask = Array.from({ length: perToken - 20 }, () => '{{ data | reveal_last: 1 }}')
      const body = Array.from({ length: count }, (_, i) => ({ type: 'token', data: `v${i}`, search_indexes: heavy, mask }))
      const response = await tokenize(body)
      expect(response.status).toBe(400)
      expect(response.body.errors).toEqual({ [`[${count - 1}].search_indexes`]: [`a request may carry at most ${EXPRESSION_LIMITS.perRequest} expressions`] })
      expect(await totalTokens()).toBe(before)
    })

    it('answers 413 naming the field where the request time budget ran out, and creates nothing', async () => {
      const before = await totalTokens()
      // 10,000 evaluations of a 900-step loop (1,000 tokens of 10) need far more than the request's budget, each well within one evaluation's limits.
      const searchIndexes = Array.from({ length: 10 }, (_, i) => `{% for i in (1..900) %}{% endfor %}{{ data }}${i}`)
      const body = Array.from({ length: EXPRESSION_LIMITS.perRequest / 10 }, (_, i) => ({ type: 'token', data: `v${i}`, search_indexes: searchIndexes }))
      const response = await tokenize(body)
      expect(response.status).toBe(413)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(response.body.code).toBe('expression_budget_exceeded')
      expect(Object.keys(response.body.errors)).toEqual([expect.stringMatching(/^\[\d+\]\.search_indexes\[\d\]$/)])
      expect(await totalTokens()).toBe(before)
    })
  })
})
