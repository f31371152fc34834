import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { abaRoutingValid, isTokenTypeName, luhnValid, revealReasonProblem, TOKEN_TYPE_NAMES, tokenDataErrors } from '../../src/shared/token-rules'
import { revealReason } from '../../src/shared/contracts/tokens'
import { ValidationError } from '../../src/main/domain/errors'
import { getTokenType, tokenTypeNames } from '../../src/main/domain/token-types'
import { breakLuhn, cardNumber, withCheckDigit } from '../helpers/tokens'

const card = (fields: Record<string, unknown> = {}) => ({ number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123', ...fields })
const bank = (fields: Record<string, unknown> = {}) => ({ routing_number: '011000015', account_number: '123456789', ...fields })

/** The service's verdict on the same data. */
function serviceErrors(type: string, data: unknown): Record<string, string[]> {
  try {
    getTokenType(type)!.parseData(data, 'data')
    return {}
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError)
    return (error as ValidationError).errors!
  }
}

describe('token type names', () => {
  it('are the types the service registers and the REST contract accepts', () => {
    expect([...TOKEN_TYPE_NAMES]).toEqual(tokenTypeNames())
  })

  it('recognise only their own names, not members of Object', () => {
    expect(isTokenTypeName('card')).toBe(true)
    for (const name of ['Card', 'constructor', '__proto__', 'toString', '', undefined]) expect(isTokenTypeName(name)).toBe(false)
  })
})

describe('luhnValid and abaRoutingValid', () => {
  it('accept numbers ending with their check digit, and refuse any other last digit', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{12,18}$/), (prefix) => {
        const valid = withCheckDigit(prefix)
        expect(luhnValid(valid)).toBe(true)
        expect(luhnValid(breakLuhn(valid))).toBe(false)
      })
    )
  })

  it('know the published test numbers', () => {
    for (const n of ['4242424242424242', '5555555555554444', '378282246310005', '6011111111111117']) expect(luhnValid(n)).toBe(true)
    for (const n of ['011000015', '021000021', '111000025']) expect(abaRoutingValid(n)).toBe(true)
    for (const n of ['011000016', '01100001', '0110000150', '01100001a', '']) expect(abaRoutingValid(n)).toBe(false)
    for (const n of ['4242 4242 4242 4242', '', '42a2']) expect(luhnValid(n)).toBe(false)
  })
})

describe('tokenDataErrors', () => {
  it('accepts a whole card and a whole bank account', () => {
    expect(tokenDataErrors('card', card())).toEqual({})
    expect(tokenDataErrors('card', { number: cardNumber(13) })).toEqual({})
    expect(tokenDataErrors('bank', bank())).toEqual({})
  })

  it.each([
    ['a card number that fails Luhn', card({ number: '4242424242424241' }), { 'data.number': ['fails the Luhn check'] }],
    ['a 12-digit card number', card({ number: '424242424242' }), { 'data.number': ['must have 13 to 19 digits'] }],
    ['a card number with spaces', card({ number: '4242 4242 4242 4242' }), { 'data.number': ['must be a string of digits'] }],
    ['a card number as a JSON number', card({ number: 4242424242424242 }), { 'data.number': ['must be a string of digits'] }],
    ['month 13', card({ expiration_month: 13 }), { 'data.expiration_month': ['must be an integer from 1 to 12'] }],
    ['month 0', card({ expiration_month: 0 }), { 'data.expiration_month': ['must be an integer from 1 to 12'] }],
    ['a two-digit year', card({ expiration_year: 30 }), { 'data.expiration_year': ['must be a four-digit integer'] }],
    ['a two-digit cvc', card({ cvc: '12' }), { 'data.cvc': ['must be 3 or 4 digits'] }],
    ['a two-digit numeric cvc', card({ cvc: 12 }), { 'data.cvc': ['must be 3 or 4 digits'] }],
    ['an extra card field', card({ pin: '1234' }), { 'data.pin': ['is not an allowed field (allowed: number, expiration_month, expiration_year, cvc)'] }],
    ['a card without a number', { cvc: '123' }, { 'data.number': ['is required'] }],
    ['a routing number with a bad checksum', bank({ routing_number: '011000016' }), { 'data.routing_number': ['fails the ABA routing number checksum'] }],
    ['an 8-digit routing number', bank({ routing_number: '01100001' }), { 'data.routing_number': ['must be a string of 9 digits'] }],
    ['an 18-digit account number', bank({ account_number: '1'.repeat(18) }), { 'data.account_number': ['must be a string of 1 to 17 digits'] }],
    ['an empty account number', bank({ account_number: '' }), { 'data.account_number': ['must be a string of 1 to 17 digits'] }],
    ['a bank account as an array', ['011000015'], { data: ['must be an object'] }]
  ])('names the field of %s', (_name, data, expected) => {
    const type = 'routing_number' in (data as object) || Array.isArray(data) ? 'bank' : 'card'
    expect(tokenDataErrors(type, data)).toEqual(expected)
  })

  it('never puts the value in a message', () => {
    const number = breakLuhn(cardNumber())
    expect(JSON.stringify(tokenDataErrors('card', card({ number, cvc: '98765' })))).not.toMatch(/98765|\d{13}/)
  })

  it('takes any value for a token, and missing data for none', () => {
    expect(tokenDataErrors('token', { anything: ['goes'] })).toEqual({})
    expect(tokenDataErrors('token', undefined)).toEqual({ data: ['is required'] })
  })

  it('leaves unknown types, even names of Object members, to the service', () => {
    for (const type of ['ssn', 'constructor', '__proto__']) expect(tokenDataErrors(type, { number: '1' })).toEqual({})
  })

  it('judges fields named like members of Object as unknown fields, without throwing', () => {
    const data = JSON.parse('{"number": "4242424242424242", "__proto__": 1, "constructor": 2, "toString": 3}')
    expect(Object.keys(tokenDataErrors('card', data)).sort()).toEqual(['data.__proto__', 'data.constructor', 'data.toString'])
  })

  it('checks a merge patch field by field: missing fields stay, null removes all but a required one', () => {
    expect(tokenDataErrors('card', { expiration_month: 7 }, 'data', true)).toEqual({})
    expect(tokenDataErrors('card', { cvc: null }, 'data', true)).toEqual({})
    expect(tokenDataErrors('card', { number: null, expiration_month: 13 }, 'data', true)).toEqual({
      'data.number': ['is required'],
      'data.expiration_month': ['must be an integer from 1 to 12']
    })
    expect(tokenDataErrors('bank', undefined, 'data', true)).toEqual({})
  })

  it('puts the errors under the given path (bulk tokenize names the column)', () => {
    expect(tokenDataErrors('card', { number: '1' }, 'card_number.data')).toEqual({ 'card_number.data.number': ['must have 13 to 19 digits'] })
  })
})

describe('the service agrees', () => {
  const cardValue = fc.oneof(
    fc.constantFrom('4242424242424242', '4242424242424241', '424242424242', '', null, 12, '12', '123', '1234', '12345', 'abc'),
    fc.integer({ min: -2, max: 10_001 }),
    fc.stringMatching(/^\d{1,20}$/)
  )
  const cardData = fc.dictionary(fc.constantFrom('number', 'expiration_month', 'expiration_year', 'cvc', 'pin'), cardValue)
  const bankData = fc.dictionary(fc.constantFrom('routing_number', 'account_number', 'iban'), fc.oneof(cardValue, fc.constantFrom('011000015', '011000016')))
  const anything = fc.oneof(fc.constant(undefined), fc.jsonValue())

  it('on every card, bank account and odd value the window checks', () => {
    fc.assert(
      fc.property(fc.oneof(cardData, anything), (data) => {
        expect(tokenDataErrors('card', data)).toEqual(serviceErrors('card', data))
      }),
      { numRuns: 500 }
    )
    fc.assert(
      fc.property(fc.oneof(bankData, anything), (data) => {
        expect(tokenDataErrors('bank', data)).toEqual(serviceErrors('bank', data))
      }),
      { numRuns: 500 }
    )
  })

  it('imports nothing but other src/shared modules', () => {
    const source = readFileSync(join(__dirname, '../../src/shared/token-rules.ts'), 'utf8')
    const imports = [...source.matchAll(/(?:from\s+|import\s*\()\s*['"]([^'"]+)['"]/g)].map((match) => match[1])
    expect(imports.filter((path) => !/^\.\/[^.]/.test(path))).toEqual([])
  })
})

describe('reveal reasons', () => {
  // The window's rule (RevealDialog) and the service's (the revealReason contract) must agree, or the window
  // would offer Reveal for a reason the service refuses, or hold back one it takes.
  const pieces = fc.constantFrom('a', 'Z', '7', '票', ' ', '\t', '\n', '\u0007', '\u0085', '\u200b', '\u202e', '\u2028', '\u0301', '\u3164', '\u00a0', '\u2800', '😀')
  it('refuses in the window exactly the reasons the service refuses (up to the 200 characters the field takes)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, fc.string({ maxLength: 3 })), { maxLength: 12 }), (parts) => {
        const reason = parts.join('')
        expect(revealReasonProblem(reason) === undefined).toBe(revealReason.safeParse(reason).success)
      }),
      { numRuns: 2000 }
    )
  })
})
