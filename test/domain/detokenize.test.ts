/** Finding detokenization expressions in a body and filling in their values. */
import { describe, expect, it } from 'vitest'
import { fillDetokenized, parseDetokenizeBody, type TokenReference } from '../../src/main/domain/detokenize'
import { ExpressionBudget } from '../../src/main/domain/expressions'

const parse = (body: unknown) => parseDetokenizeBody(body, new ExpressionBudget())
const fill = (body: unknown, values: Record<string, unknown>) => fillDetokenized(parse(body).shape, (reference: TokenReference) => values[`${reference.kind}:${reference.id}`])

describe('parseDetokenizeBody', () => {
  it('reads the id, the form and the filters of each expression, with its field', () => {
    const { references, errors } = parse({ a: ['{{ id-1 }}', '{{token:id_2|json: "$.x" | last4}}'], 'b c': 'x {{ id-1 | to_string }} y' })
    expect(errors).toEqual({})
    expect(references).toEqual([
      { field: 'a[0]', id: 'id-1', kind: 'data' },
      { field: 'a[1]', id: 'id_2', kind: 'token', filterSource: '{{ data | json: "$.x" | last4 }}' },
      { field: 'b c', id: 'id-1', kind: 'data', filterSource: '{{ data | to_string }}' }
    ])
  })

  it('names each malformed expression', () => {
    expect(parse({ a: '{{}}', b: '{{ x y }}', c: '{{ x | }}', d: '{{ {x} }}' }).errors).toEqual({
      a: [expect.stringContaining('neither')],
      b: [expect.stringContaining('neither')],
      c: ['has a | without a filter after it'],
      d: [expect.stringContaining('neither')]
    })
  })
})

describe('fillDetokenized', () => {
  it('keeps the JSON type of a string that is exactly one expression, surrounding whitespace aside', () => {
    expect(fill({ n: '  {{ a }} ', o: '{{ token: a }}', z: '{{ b }}' }, { 'data:a': 42, 'token:a': { id: 'a' }, 'data:b': null })).toEqual({ n: 42, o: { id: 'a' }, z: null })
  })

  it('writes values into mixed text: strings as they are, null as nothing, the rest as JSON', () => {
    const values = { 'data:s': 'text', 'data:n': null, 'data:o': { k: [1] }, 'data:b': true }
    expect(fill('{{ s }}|{{ n }}|{{ o }}|{{ b }}', values)).toBe('text||{"k":[1]}|true')
  })

  it('leaves strings without complete expressions and other values as they are', () => {
    const body = { a: '{{ open', b: '}} {{', c: 1, d: [false, null] }
    expect(fill(body, {})).toEqual(body)
  })
})
