/** Expressions at creation: masks, id expressions, search indexes and fingerprint expressions. */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { cardNumber, cardNumberEndingWith } from '../../helpers/tokens'
import { masker, post, create, get, card, useTokensService } from './fixture'

useTokensService()

describe('tokens', () => {
  describe('POST /tokens with expressions', () => {
    it('applies a custom mask expression for a masking caller and returns the expression in mask', async () => {
      const mask = '{{ data | reveal_last: 4 }}'
      const token = await create({ type: 'token', data: 'hello-world-1234', mask }, masker.key)
      expect(token.data).toBe('XXXXXXXXXXXX1234')
      expect(token.mask).toBe(mask)
    })

    it('applies an object mask leaf by leaf', async () => {
      const mask = { first: '{{ data.first | reveal_last: 1 }}', fixed: 7 }
      const token = await create({ type: 'token', data: { first: 'Grace', last: 'Hopper' }, mask }, masker.key)
      expect(token.data).toEqual({ first: 'XXXXe', fixed: 7 })
    })

    it.each([
      ['an unknown filter', '{{ data | nope }}', 'mask'],
      ['bad syntax', '{{ data ', 'mask'],
      ['a filter with a wrong argument', '{{ data | reveal_last: "x" }}', 'mask'],
      ['a bad leaf in an object mask', { ok: '{{ data }}', bad: '{{ data | nope }}' }, 'mask.bad']
    ])('rejects a mask with %s', async (_label, mask, field) => {
      const response = await post({ type: 'token', data: 'x', mask })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('rejects a mask that cannot be evaluated on the data', async () => {
      const response = await post({ type: 'token', data: 'not a number', mask: '{{ data | to_number }}' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['mask'])
      const byCard = await post({ type: 'card', data: card(), mask: { number: '{{ data.number | reveal: 6, 4 }}', month: '{{ data.expiration_month | card_mask }}' } })
      expect(byCard.status).toBe(400)
      expect(Object.keys(byCard.body.errors)).toEqual(['mask.month'])
    })

    it('evaluates an id expression against the data', async () => {
      const token = await create({ id: '{{ data | alias_preserve_format }}', type: 'token', data: 'order-8731-' + randomUUID() })
      expect(token.id).toMatch(/^[a-z]{5}-\d{4}-[0-9a-z]{8}-/)
      expect((await get(token.id)).body.data).toBe(token.data)
    })

    it('evaluates an id expression mixing text and outputs', async () => {
      const number = cardNumber()
      const token = await create({ id: 'card-{{ data.number | alias_card }}-' + randomUUID(), type: 'card', data: card({ number }) })
      expect(token.id).toMatch(/^card-4\d{15}-/)
      expect(token.id).not.toContain(number)
    })

    it('rejects an id expression that yields fewer than 3 characters', async () => {
      const response = await post({ id: '{{ data | alias_preserve_length }}', type: 'token', data: 'ab' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['id'])
    })

    it('rejects an id expression that yields an object or null', async () => {
      expect((await post({ id: '{{ (1..3) }}', type: 'token', data: { a: 1 } })).status).toBe(400)
      expect((await post({ id: '{{ data.nope | alias_preserve_length }}', type: 'token', data: { a: 1 } })).status).toBe(400)
    })

    it('rejects an invalid id expression', async () => {
      const response = await post({ id: '{{ data | nope }}', type: 'token', data: 'abcdef' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['id'])
    })

    it('rejects an id expression whose value contains a forbidden character', async () => {
      const response = await post({ id: '{{ data | alias_preserve_format }}', type: 'token', data: 'a/b/c' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['id'])
    })

    it('stores search_indexes and returns them', async () => {
      const search_indexes = ['{{ data | last4 }}', '{{ data | stringify }}']
      expect((await create({ type: 'token', data: 'abcdef', search_indexes })).search_indexes).toEqual(search_indexes)
    })

    it.each([
      ['an invalid expression', ['{{ data | nope }}'], 'search_indexes[0]'],
      ['a non-string entry', [1], 'search_indexes[0]'],
      ['a string instead of a list', '{{ data }}', 'search_indexes']
    ])('rejects search_indexes with %s', async (_label, search_indexes, field) => {
      const response = await post({ type: 'token', data: 'x', search_indexes })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('fingerprints the value of a custom fingerprint_expression', async () => {
      const first = cardNumber()
      const second = cardNumberEndingWith(first.slice(-4))
      const fingerprint_expression = '{{ data.number | last4 }}'
      const a = await create({ type: 'card', data: { number: first }, fingerprint_expression })
      const b = await create({ type: 'card', data: { number: second }, fingerprint_expression })
      expect(a.fingerprint_expression).toBe(fingerprint_expression)
      expect(a.fingerprint).toBe(b.fingerprint)
    })

    it('reads back each fingerprint_expression as given: the default, another type\'s default, and an empty one', async () => {
      const cases = [
        [{ type: 'token', data: 'a' }, '{{ data | stringify }}'],
        [{ type: 'token', data: 'b', fingerprint_expression: '' }, ''],
        [{ type: 'card', data: card(), fingerprint_expression: '{{ data | stringify }}' }, '{{ data | stringify }}'],
        [{ type: 'card', data: card() }, '{{ data.number }}']
      ] as const
      for (const [request, expression] of cases) {
        const { id } = await create(request)
        expect((await get(id)).body.fingerprint_expression).toBe(expression)
      }
    })

    it('can fingerprint metadata', async () => {
      const fingerprint_expression = '{{ metadata.customer }}'
      const a = await create({ type: 'token', data: 'one', metadata: { customer: 'c-42' }, fingerprint_expression })
      const b = await create({ type: 'token', data: 'two', metadata: { customer: 'c-42' }, fingerprint_expression })
      expect(a.fingerprint).toBe(b.fingerprint)
    })

    it('rejects an invalid fingerprint_expression', async () => {
      const response = await post({ type: 'token', data: 'x', fingerprint_expression: '{{ data | nope }}' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['fingerprint_expression'])
    })
  })
})
