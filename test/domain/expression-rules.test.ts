import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/main/domain/errors'
import { checkIdExpression, checkMaskMaximum, leavesShowingData } from '../../src/main/domain/expression-rules'
import { evaluateMask, maskExpressions } from '../../src/main/domain/expressions'
import { getTokenType } from '../../src/main/domain/token-types'

const card = getTokenType('card')!
const bank = getTokenType('bank')!
const token = getTokenType('token')!
const PAN = '4111111111111111'

/** The field errors of `fn`, or {} when it does not throw. */
function errorsOf(fn: () => unknown): Record<string, string[]> {
  try {
    fn()
    return {}
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError)
    return (error as ValidationError).errors ?? {}
  }
}

describe('id expressions', () => {
  it.each([
    ['a reversed card number', '{{ data.number | split: "" | reverse | join: "" }}'],
    ['a sliced card number', 'pan-{{ data.number | slice: 0, 15 }}'],
    ['the last four digits', 'card-{{ data.number | last4 }}'],
    ['a masking filter', '{{ data.number | card_mask }}'],
    ['a bare field', '{{ data.expiration_year }}'],
    ['the data as a filter argument', '{{ "x" | append: data.number }}'],
    ['the data after an alias', '{{ data.number | alias_card | append: data.cvc }}'],
    ['an alias after another filter', '{{ data.number | downcase | alias_card }}'],
    ['a computed key', '{{ data[data.k] | alias_preserve_length }}'],
    ['one character of the data', '{{ data.number[3] | alias_preserve_format }}'],
    ['a variable compared in an operator', '{{ data.number == "4" }}']
  ])('refuses %s', (_label, source) => {
    expect(Object.keys(errorsOf(() => checkIdExpression(source, 'id')))).toEqual(['id'])
  })

  it.each([
    ['assign', '{% assign n = data.number | alias_card %}{{ n }}'],
    ['if', '{% if data.cvc %}x{% endif %}'],
    ['raw', '{% raw %}{{ data }}{% endraw %}']
  ])('refuses the %s tag', (_label, source) => {
    expect(errorsOf(() => checkIdExpression(source, 'id')).id[0]).toContain('tags')
  })

  it.each(['customer-42', 'card-{{ data.number | alias_card }}', '{{ data | alias_preserve_format }}-{{ data.x | alias_preserve_length }}', '{{ "a" | append: "b" }}'])(
    'accepts text, literals and aliases: %s',
    (source) => {
      expect(errorsOf(() => checkIdExpression(source, 'id'))).toEqual({})
    }
  )
})

describe('card and bank mask maximum', () => {
  it('accepts the built-in masks', () => {
    expect(errorsOf(() => checkMaskMaximum(card.defaultMask, card, 'mask'))).toEqual({})
    expect(errorsOf(() => checkMaskMaximum(bank.defaultMask, bank, 'mask'))).toEqual({})
  })

  it.each([
    { number: '{{ data.number | card_mask }}' },
    { number: '{{ data.number | reveal: 6, 4 }}', last: '{{ data.number | last4 }}', bin: '{{ data.number | reveal: 6, 0 }}' },
    { number: "{{ data['number'] | reveal_last: 4, '*' }}" },
    { number: '{% assign n = data.number | reveal_last: 4 %}{{ n | prepend: "card " }}' },
    { cvc: '{{ data.cvc | alias_preserve_length }}', expiry: '{{ data.expiration_month | pad_left: 2, "0" }}/{{ data.expiration_year }}' },
    '{{ data.number | card_mask }} {{ data.expiration_month }}'
  ])('accepts a card mask within the first 6 and last 4 digits: %j', (mask) => {
    expect(errorsOf(() => checkMaskMaximum(mask, card, 'mask'))).toEqual({})
  })

  it.each([
    ['the number as is', { n: '{{ data.number }}' }, 'mask.n'],
    ['the CVC', { c: '{{ data.cvc }}' }, 'mask.c'],
    ['the CVC through a masking filter', { c: '{{ data.cvc | last4 }}' }, 'mask.c'],
    ['seven leading digits', { n: '{{ data.number | reveal: 7, 4 }}' }, 'mask.n'],
    ['five trailing digits', { n: '{{ data.number | reveal_last: 5 }}' }, 'mask.n'],
    ['eight BIN digits', { n: '{{ data.number | card_bin }}' }, 'mask.n'],
    ['a slice before the mask', { n: '{{ data.number | slice: 6, 6 | reveal_last: 4 }}' }, 'mask.n'],
    ['one digit by index', { n: '{{ data.number[6] | last4 }}' }, 'mask.n'],
    ['a computed field', { n: '{{ data[key] | card_mask }}' }, 'mask.n'],
    ['the whole data', { n: '{{ data | json: "number" }}' }, 'mask.n'],
    ['an assign', { n: '{% assign x = data.number %}{{ x | card_mask }}' }, 'mask.n'],
    ['a capture', { n: '{% capture x %}{{ data.number | slice: 6, 6 }}{% endcapture %}{{ x }}' }, 'mask.n'],
    ['a loop', { n: '{% for c in data.number %}{{ c }}{% endfor %}' }, 'mask.n'],
    ['a condition', { n: '{% if data.number contains "4111" %}yes{% endif %}' }, 'mask.n'],
    ['a case', { n: '{% case data.cvc %}{% when "123" %}yes{% endcase %}' }, 'mask.n'],
    ['a liquid tag', { n: '{% liquid\necho data.cvc %}' }, 'mask.n'],
    ['a filter argument', { n: '{{ "" | append: data.number }}' }, 'mask.n'],
    ['a nested leaf', { a: [{ b: '{{ data.number }}' }] }, 'mask.a[0].b']
  ])('refuses a card mask showing %s, naming the leaf', (_label, mask, leaf) => {
    expect(Object.keys(errorsOf(() => checkMaskMaximum(mask, card, 'mask')))).toEqual([leaf])
  })

  it('names the CVC and the number in their messages', () => {
    const errors = errorsOf(() => checkMaskMaximum({ n: '{{ data.number }}', c: '{{ data.cvc }}' }, card, 'mask'))
    expect(errors).toEqual({
      'mask.n': ['must not show more of data.number than the first 6 and the last 4 characters'],
      'mask.c': ['must not show data.cvc']
    })
  })

  it('refuses a bank mask showing more than the last 4 digits of the account number', () => {
    expect(Object.keys(errorsOf(() => checkMaskMaximum({ a: '{{ data.account_number | card_mask }}' }, bank, 'mask')))).toEqual(['mask.a'])
    expect(Object.keys(errorsOf(() => checkMaskMaximum('{{ data.account_number }}', bank, 'mask')))).toEqual(['mask'])
    expect(errorsOf(() => checkMaskMaximum({ a: '{{ data.account_number | last4 }}', r: '{{ data.routing_number }}' }, bank, 'mask'))).toEqual({})
  })

  it('leaves generic tokens to their creator', () => {
    expect(errorsOf(() => checkMaskMaximum({ n: '{{ data.number }}' }, token, 'mask'))).toEqual({})
  })

  it('holds for every accepted card mask when evaluated: no digit beyond the first 6 and last 4 shows', () => {
    const middle = PAN.slice(6, -4)
    for (const mask of [card.defaultMask, { n: '{{ data.number | card_mask }}', l: '{{ data.number | last4 }}' }, { n: '{{ data.number | reveal: 6, 4 }}' }]) {
      checkMaskMaximum(mask, card, 'mask')
      const shown = JSON.stringify(evaluateMask(mask, { number: PAN, cvc: '987' }))
      expect(shown).not.toContain(middle)
      expect(shown).not.toContain('987')
    }
  })
})

describe('mask leaves showing data as is', () => {
  const showing = (mask: unknown, type: typeof token) => leavesShowingData(maskExpressions(mask, 'mask'), type)
  it('finds none in masks that only mask', () => {
    expect(showing(card.defaultMask, card)).toEqual([])
    expect(showing(bank.defaultMask, bank)).toEqual([])
    expect(showing({ n: '{{ data.number | card_mask }}', l: '{{ data.number | last4 }}' }, card)).toEqual([])
    expect(showing({ c: '{{ data.c | alias_preserve_length }}', e: 'fixed', f: 7 }, token)).toEqual([])
  })

  it('names masking windows on fields whose length the type does not bound: a value no longer than the window shows whole', () => {
    const windows = { a: '{{ data.a | reveal_last: 4 }}', b: '{{ data.b | reveal: 2, 2 }}', n: '{{ data.name | last4 }}' }
    expect(showing(windows, token)).toEqual(['mask.a', 'mask.b', 'mask.n'])
    expect(evaluateMask(windows, { a: '4921', b: 'abcd', name: 'Ada' })).toEqual({ a: '4921', b: 'abcd', n: 'Ada' })
  })

  it('names the leaves that show data unmasked, through a too-wide window or a tag', () => {
    const mask = {
      plain: '{{ data.a }}',
      wide: '{{ data.a | reveal: 100, 0 }}',
      stringified: '{{ data | stringify }}',
      condition: '{% if data.a == "x" %}x{% endif %}',
      aliased: '{{ data.a | alias_preserve_format }}'
    }
    expect(showing(mask, token)).toEqual(['mask.plain', 'mask.wide', 'mask.stringified', 'mask.condition'])
  })

  it('accepts the fields the type default mask shows as is, and nothing else of the type', () => {
    expect(showing({ m: '{{ data.expiration_month }}' }, card)).toEqual([])
    expect(showing({ n: '{{ data.number }}', c: '{{ data.cvc }}' }, card)).toEqual(['mask.n', 'mask.c'])
    expect(showing({ r: '{{ data.routing_number }}', a: '{{ data.account_number }}' }, bank)).toEqual(['mask.a'])
  })
})
