import { describe, expect, it, vi } from 'vitest'
import { Liquid } from 'liquidjs'
import { ValidationError } from '../../src/main/domain/errors'
import {
  EXPRESSION_LIMITS,
  ExpressionBudget,
  evaluateExpression,
  evaluateMask,
  renderFingerprintSource,
  validateExpression,
  validateMask
} from '../../src/main/domain/expressions'
import { luhnValid } from '../../src/shared/token-rules'

const CARD = '4242424242424242'
const evaluate = (source: string, data: unknown, metadata?: Record<string, string>) =>
  evaluateExpression(source, { data, metadata }, 'expr')

/** A budget with the default counts, steps and memory but no time limits, for deterministic tests. */
const untimed = () => new ExpressionBudget({ ...EXPRESSION_LIMITS, requestMs: Infinity })

/** Runs `fn`, expecting a ValidationError; returns its field errors. */
function fieldErrors(fn: () => unknown): Record<string, string[]> {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError)
    return (err as ValidationError).errors ?? {}
  }
  throw new Error('expected a ValidationError')
}

describe('evaluateExpression', () => {
  it('keeps the JSON type of a single output', () => {
    expect(evaluate('{{ data }}', 12)).toBe(12)
    expect(evaluate('{{ data }}', true)).toBe(true)
    expect(evaluate('{{ data }}', { a: [1, 'b'] })).toEqual({ a: [1, 'b'] })
    expect(evaluate('{{ data.m }}', { m: 7 })).toBe(7)
  })

  it('ignores whitespace around a single output', () => {
    expect(evaluate('  {{ data }}\n', 5)).toBe(5)
  })

  it('returns null for a missing value', () => {
    expect(evaluate('{{ data.absent }}', {})).toBeNull()
    expect(evaluate('{{ data.expiration_month }}', { number: CARD })).toBeNull()
  })

  it('renders templates with more than one part to a string', () => {
    expect(evaluate('{{ data.a }}|{{ data.b }}', { a: 1, b: 2 })).toBe('1|2')
    expect(evaluate('n={{ data }}', 3)).toBe('n=3')
    expect(evaluate('{% if data > 1 %}big{% endif %}', 3)).toBe('big')
  })

  it('renders objects and arrays as JSON inside a larger template', () => {
    expect(evaluate('{{ data.a }}|{{ data.b }}', { a: { x: 1 }, b: ['1', '2'] })).toBe('{"x":1}|["1","2"]')
  })

  it('exposes metadata', () => {
    expect(evaluate('{{ metadata.k }}-{{ data }}', 'v', { k: 'm' })).toBe('m-v')
  })

  it('supports the standard Liquid filters', () => {
    expect(evaluate('{{ data | upcase }}', 'abc')).toBe('ABC')
    expect(evaluate('{{ data | plus: 1 }}', 1)).toBe(2)
  })

  it('hides inherited properties', () => {
    expect(evaluate('{{ data.constructor }}', {})).toBeNull()
  })

  it('rejects an unknown filter naming the field', () => {
    const errors = fieldErrors(() => evaluateExpression('{{ data | nope }}', { data: 1 }, 'mask.number'))
    expect(Object.keys(errors)).toEqual(['mask.number'])
    expect(errors['mask.number'][0]).toContain('undefined filter: nope')
  })

  it('parses a source only once, however often it is evaluated', () => {
    const parse = vi.spyOn(Liquid.prototype, 'parse')
    const source = '{{ data | append: "-cached" }}'
    expect(evaluate(source, 'a')).toBe('a-cached')
    expect(evaluate(source, 'b')).toBe('b-cached')
    expect(parse).toHaveBeenCalledTimes(1)
    parse.mockRestore()
  })

  it('does not echo the data in a filter error', () => {
    const errors = fieldErrors(() => evaluate('{{ data | to_number }}', CARD + 'x'))
    expect(JSON.stringify(errors)).not.toContain(CARD)
  })

  it('explains invalid JSON input without quoting it', () => {
    const errors = fieldErrors(() => evaluate('{{ data | json: "a" }}', `{"a": ${CARD}`))
    expect(errors.expr).toEqual(['json: input is not valid JSON'])
  })

  it('replaces the message of a standard filter failure with a generic one', () => {
    expect(fieldErrors(() => evaluate('{{ data | url_decode }}', `${CARD}%E0%A4%A`)).expr).toEqual([
      'the expression could not be evaluated'
    ])
  })
})

describe('validateExpression', () => {
  it('returns a valid source', () => {
    expect(validateExpression('{{ data | reveal_last: 4 }}', 'mask')).toBe('{{ data | reveal_last: 4 }}')
  })

  it('rejects a value that is not a string', () => {
    expect(fieldErrors(() => validateExpression(4, 'fingerprint_expression'))).toHaveProperty('fingerprint_expression')
  })

  it('rejects bad syntax naming the field', () => {
    expect(fieldErrors(() => validateExpression('{{ data | ', 'id'))).toHaveProperty('id')
    expect(fieldErrors(() => validateExpression('{% if data %}', 'id'))).toHaveProperty('id')
  })

  it('rejects an unknown filter', () => {
    expect(fieldErrors(() => validateExpression('{{ data | reveal_lats: 4 }}', 'mask'))).toHaveProperty('mask')
  })

  it('rejects wrong filter arguments before seeing any data', () => {
    expect(fieldErrors(() => validateExpression('{{ data | reveal_last }}', 'mask')).mask[0]).toBe(
      'reveal_last expects 1 to 2 arguments, got 0'
    )
    expect(fieldErrors(() => validateExpression("{{ data | reveal_last: 'four' }}", 'mask')).mask[0]).toContain(
      'n must be an integer'
    )
  })

  it('refuses include, render and layout', () => {
    for (const source of ["{% include 'x' %}", "{% render 'x' %}", "{% layout 'x' %}"]) {
      expect(fieldErrors(() => validateExpression(source, 'mask')).mask[0]).toContain('is not allowed')
    }
  })

  it('stops nested loops at the step limit of one evaluation', () => {
    const source = '{% for i in (1..3000) %}{% for j in (1..3000) %}{% assign x = j %}{% endfor %}{% endfor %}'
    expect(fieldErrors(() => validateExpression(source, 'mask', untimed())).mask).toEqual([`takes more than ${EXPRESSION_LIMITS.steps} steps to evaluate`])
  })

  it('stops a huge range at the memory limit of one evaluation', () => {
    const source = '{% for i in (1..100000000) %}{% endfor %}'
    expect(fieldErrors(() => validateExpression(source, 'mask')).mask).toEqual([
      `uses more than the ${EXPRESSION_LIMITS.memory} units of memory one evaluation may use`
    ])
  })

  it('refuses a source over the parse limit', () => {
    expect(fieldErrors(() => validateExpression('x'.repeat(30_000), 'mask'))).toHaveProperty('mask')
  })
})

describe('filters', () => {
  it('stringify gives compact JSON and keeps null', () => {
    expect(evaluate('{{ data | stringify }}', { a: [1, 'x'] })).toBe('{"a":[1,"x"]}')
    expect(evaluate('{{ data | stringify }}', 'x')).toBe('"x"')
    expect(evaluate('{{ data | stringify }}', null)).toBeNull()
  })

  it('last4 keeps the last four characters', () => {
    expect(evaluate('{{ data | last4 }}', CARD)).toBe('4242')
    expect(evaluate('{{ data | last4 }}', 12)).toBe('12')
  })

  it('reveal_last masks all but the last 4 digits of a card number', () => {
    expect(evaluate('{{ data | reveal_last: 4 }}', CARD)).toBe('XXXXXXXXXXXX4242')
  })

  it('reveal_last takes a mask character and stringifies numbers', () => {
    expect(evaluate("{{ data | reveal_last: 2, '*' }}", 123456)).toBe('****56')
    expect(evaluate('{{ data | reveal_last: 9 }}', 'abc')).toBe('abc')
    expect(evaluate('{{ data | reveal_last: 0 }}', 'abc')).toBe('XXX')
  })

  it('reveal_last rejects bad arguments and object input', () => {
    expect(() => validateExpression('{{ data | reveal_last: -1 }}', 'm')).toThrow(ValidationError)
    expect(() => validateExpression('{{ data | reveal_last: 1.5 }}', 'm')).toThrow(ValidationError)
    expect(() => validateExpression("{{ data | reveal_last: 4, 'ab' }}", 'm')).toThrow(ValidationError)
    expect(() => validateExpression("{{ data | reveal_last: 4, 'a', 'b' }}", 'm')).toThrow(ValidationError)
    expect(fieldErrors(() => evaluate('{{ data | reveal_last: 4 }}', { a: 1 })).expr).toEqual([
      'reveal_last expects a string or number input'
    ])
  })

  it('reveal keeps the first and last characters', () => {
    expect(evaluate('{{ data | reveal: 6, 4 }}', CARD)).toBe('424242XXXXXX4242')
    expect(evaluate("{{ data | reveal: 1, 1, '#' }}", 'abcd')).toBe('a##d')
    expect(evaluate('{{ data | reveal: 3, 3 }}', 'abcd')).toBe('abcd')
  })

  it('reveal rejects bad arguments', () => {
    expect(() => validateExpression('{{ data | reveal: 1 }}', 'm')).toThrow(ValidationError)
    expect(() => validateExpression("{{ data | reveal: 1, 'x' }}", 'm')).toThrow(ValidationError)
  })

  it('json reads a dot or bracket path from an object or a JSON string', () => {
    const data = { a: { b: [10, { c: 'deep' }], 'x y': 1 } }
    expect(evaluate("{{ data | json: 'a.b[1].c' }}", data)).toBe('deep')
    expect(evaluate("{{ data | json: '$.a.b[0]' }}", data)).toBe(10)
    expect(evaluate(`{{ data | json: "a['x y']" }}`, data)).toBe(1)
    expect(evaluate("{{ data | json: 'a.b' }}", JSON.stringify(data))).toEqual([10, { c: 'deep' }])
    expect(evaluate("{{ data | json: 'a.missing.z' }}", data)).toBeNull()
    expect(evaluate("{{ data | json: 'a.constructor' }}", data)).toBeNull()
  })

  it('json rejects a bad path and non-JSON input', () => {
    expect(() => validateExpression("{{ data | json: 'a..b' }}", 'm')).toThrow(ValidationError)
    expect(() => validateExpression("{{ data | json: 'a[' }}", 'm')).toThrow(ValidationError)
    expect(() => validateExpression('{{ data | json }}', 'm')).toThrow(ValidationError)
    expect(() => validateExpression('{{ data | json: 3 }}', 'm')).toThrow(ValidationError)
    expect(() => evaluate("{{ data | json: 'a' }}", 'not json')).toThrow(ValidationError)
  })

  it('pad_left and pad_right pad to a length', () => {
    expect(evaluate("{{ data | pad_left: 5, '0' }}", 42)).toBe('00042')
    expect(evaluate("{{ data | pad_right: 5, '.' }}", 'ab')).toBe('ab...')
    expect(evaluate("{{ data | pad_left: 2, '0' }}", 'abc')).toBe('abc')
  })

  it('pad_left and pad_right reject bad arguments', () => {
    expect(() => validateExpression('{{ data | pad_left: 5 }}', 'm')).toThrow(ValidationError)
    expect(() => validateExpression("{{ data | pad_right: 5, '00' }}", 'm')).toThrow(ValidationError)
    expect(() => validateExpression("{{ data | pad_left: 100000, '0' }}", 'm')).toThrow(ValidationError)
  })

  it('alias_preserve_format keeps character classes and separators', () => {
    const alias = evaluate('{{ data | alias_preserve_format }}', 'Ab-12 z') as string
    expect(alias).toMatch(/^[A-Z][a-z]-\d\d [a-z]$/)
  })

  it('alias_preserve_length gives random alphanumerics of the same length', () => {
    const alias = evaluate('{{ data | alias_preserve_length }}', 'a-b c!') as string
    expect(alias).toMatch(/^[A-Za-z0-9]{6}$/)
  })

  it('alias_card gives a Luhn-valid number of the same length and first digit', () => {
    for (let i = 0; i < 20; i++) {
      const alias = evaluate('{{ data | alias_card }}', CARD) as string
      expect(alias).toMatch(/^4\d{15}$/)
      expect(luhnValid(alias)).toBe(true)
    }
  })

  it('alias filters take no arguments and alias_card needs a card number', () => {
    expect(() => validateExpression('{{ data | alias_card: 1 }}', 'm')).toThrow(ValidationError)
    expect(() => validateExpression('{{ data | alias_preserve_length: 1 }}', 'm')).toThrow(ValidationError)
    expect(() => evaluate('{{ data | alias_card }}', '1234')).toThrow(ValidationError)
  })

  it('card_mask shows the first 6 and last 4 digits', () => {
    expect(evaluate('{{ data | card_mask }}', CARD)).toBe('424242XXXXXX4242')
    expect(evaluate('{{ data | card_mask }}', '4222222222222')).toBe('422222XXX2222')
    expect(() => evaluate('{{ data | card_mask }}', '4242-4242')).toThrow(ValidationError)
  })

  it('card_bin gives 8 digits for 16+ digit numbers and 6 for shorter ones', () => {
    expect(evaluate('{{ data | card_bin }}', CARD)).toBe('42424242')
    expect(evaluate('{{ data | card_bin }}', '4222222222222')).toBe('422222')
    expect(() => evaluate('{{ data | card_bin }}', 'abc')).toThrow(ValidationError)
  })

  it('to_string, to_number and to_boolean convert', () => {
    expect(evaluate('{{ data | to_string }}', 12)).toBe('12')
    expect(evaluate('{{ data | to_string }}', { a: 1 })).toBe('{"a":1}')
    expect(evaluate('{{ data | to_number }}', ' 12.5 ')).toBe(12.5)
    expect(evaluate('{{ data | to_number }}', 3)).toBe(3)
    expect(evaluate('{{ data | to_boolean }}', 'TRUE')).toBe(true)
    expect(evaluate('{{ data | to_boolean }}', '0')).toBe(false)
    expect(evaluate('{{ data | to_boolean }}', 2)).toBe(true)
  })

  it('to_number and to_boolean reject what they cannot convert', () => {
    expect(fieldErrors(() => evaluate('{{ data | to_number }}', 'abc')).expr).toEqual(['to_number: input is not a number'])
    expect(() => evaluate('{{ data | to_number }}', '')).toThrow(ValidationError)
    expect(() => evaluate('{{ data | to_boolean }}', 'maybe')).toThrow(ValidationError)
    expect(() => validateExpression('{{ data | to_string: 1 }}', 'm')).toThrow(ValidationError)
  })

  it('passes null input through every custom filter', () => {
    for (const f of ['last4', 'reveal_last: 4', 'reveal: 1, 1', "json: 'a'", "pad_left: 3, '0'", 'card_mask', 'to_number']) {
      expect(evaluate(`{{ data.absent | ${f} }}`, {})).toBeNull()
    }
  })
})

describe('masks', () => {
  const cardMask = {
    number: '{{ data.number | reveal_last: 4 }}',
    expiration_month: '{{ data.expiration_month }}',
    expiration_year: '{{ data.expiration_year }}'
  }

  it('evaluates an object mask keeping integer months and years', () => {
    expect(evaluateMask(cardMask, { number: CARD, expiration_month: 4, expiration_year: 2031 })).toEqual({
      number: 'XXXXXXXXXXXX4242',
      expiration_month: 4,
      expiration_year: 2031
    })
  })

  it('evaluates absent optional fields to null', () => {
    expect(evaluateMask(cardMask, { number: CARD })).toEqual({
      number: 'XXXXXXXXXXXX4242',
      expiration_month: null,
      expiration_year: null
    })
  })

  it('evaluates a string mask, arrays and nested objects, keeping non-string leaves', () => {
    expect(evaluateMask('{{ data | last4 }}', CARD)).toBe('4242')
    expect(evaluateMask(['{{ data.a }}', 5, null, { b: '{{ data.a | plus: 1 }}' }], { a: 1 })).toEqual([1, 5, null, { b: 2 }])
  })

  it('keeps a __proto__ key as a plain key', () => {
    const mask = JSON.parse('{"__proto__": "{{ data }}"}')
    const result = evaluateMask(mask, 'x') as Record<string, unknown>
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype)
    expect(Object.hasOwn(result, '__proto__')).toBe(true)
  })

  it('validates every leaf, naming nested paths', () => {
    const errors = fieldErrors(() =>
      validateMask({ number: '{{ data | nope }}', list: ['{{ ok }}', '{{ data | '], 'a b': '{{ x | bad }}' }, 'mask')
    )
    expect(Object.keys(errors).sort()).toEqual(['mask.list[1]', 'mask.number', 'mask["a b"]'].sort())
  })

  it('returns a valid mask unchanged', () => {
    expect(validateMask(cardMask, 'mask')).toBe(cardMask)
    expect(validateMask(7, 'mask')).toBe(7)
  })

  it('rejects a mask nested too deeply', () => {
    let mask: unknown = '{{ data }}'
    for (let i = 0; i < 40; i++) mask = [mask]
    expect(() => validateMask(mask, 'mask')).toThrow(ValidationError)
  })

  it('names the leaf of a runtime mask error', () => {
    expect(fieldErrors(() => evaluateMask({ n: '{{ data | to_number }}' }, 'abc'))).toHaveProperty(['mask.n'])
  })
})

describe('renderFingerprintSource', () => {
  it('returns strings as they are', () => {
    expect(renderFingerprintSource('{{ data.number }}', { number: CARD }, {})).toBe(CARD)
    expect(renderFingerprintSource('{{ data.account_number }}|{{ data.routing_number }}', { account_number: '1', routing_number: '2' }, {})).toBe('1|2')
  })

  it('JSON-encodes other values and gives null for null', () => {
    expect(renderFingerprintSource('{{ data.n }}', { n: 5 }, {})).toBe('5')
    expect(renderFingerprintSource('{{ data }}', { a: 1 }, {})).toBe('{"a":1}')
    expect(renderFingerprintSource('{{ data | stringify }}', null, {})).toBe('null')
    expect(renderFingerprintSource('{{ data.missing }}', {}, {})).toBe('null')
  })

  it('can use metadata', () => {
    expect(renderFingerprintSource('{{ metadata.tenant_key }}:{{ data }}', 'v', { tenant_key: 'k' })).toBe('k:v')
  })

  it('names fingerprint_expression in errors', () => {
    expect(fieldErrors(() => renderFingerprintSource('{{ data | to_number }}', 'x', {}))).toHaveProperty('fingerprint_expression')
  })
})

describe('ExpressionBudget.breathe', () => {
  it('grants one slice of expression work per turn of the event loop, however many requests are evaluating', async () => {
    const trace: string[] = []
    /** A request's evaluations: each about half a millisecond of work (charged to its budget), with breathe() between them. */
    const request = async (name: string) => {
      const budget = new ExpressionBudget()
      for (let i = 0; i < 16; i++) {
        await budget.breathe()
        budget.spend('field', () => {
          const until = performance.now() + 0.5
          while (performance.now() < until) {
            // busy, as an evaluation is
          }
        })
        trace.push(name)
      }
    }
    let running = true
    // Marks each turn of the event loop.
    const turns = (async () => {
      while (running) {
        await new Promise((resolve) => setImmediate(resolve))
        trace.push('|')
      }
    })()
    await Promise.all(['a', 'b', 'c'].map(request))
    running = false
    await turns
    // Each request's first slice is free; after that, one request works per turn.
    const perTurn = trace.join('').split('|').filter(Boolean).slice(1)
    expect(perTurn.length).toBeGreaterThan(3)
    for (const work of perTurn) expect(new Set(work).size, work).toBe(1)
  })

  it('never makes a request with little expression work wait', async () => {
    const budget = new ExpressionBudget()
    let turned = false
    setImmediate(() => (turned = true))
    for (let i = 0; i < 100; i++) await budget.breathe()
    expect(turned).toBe(false)
  })
})
