import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { abaRoutingValid, luhnValid, TOKEN_TYPE_NAMES } from '../../src/shared/token-rules'
import { ValidationError } from '../../src/main/domain/errors'
import { getTokenType, tokenTypeNames } from '../../src/main/domain/token-types'
import { evaluateMask, renderFingerprintSource, validateExpression, validateMask } from '../../src/main/domain/expressions'

const CARD = '4242424242424242'

function errorsOf(type: string, data: unknown): Record<string, string[]> | undefined {
  try {
    getTokenType(type)!.parseData(data, 'data')
    return undefined
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError)
    return (err as ValidationError).errors
  }
}

describe('luhnValid', () => {
  it('accepts known valid card numbers', () => {
    for (const n of [CARD, '4000056655665556', '5555555555554444', '378282246310005', '6011111111111117', '0']) {
      expect(luhnValid(n)).toBe(true)
    }
  })

  it('rejects numbers with a wrong check digit and non-digits', () => {
    for (const n of ['4242424242424241', '378282246310006', '4242 4242', '', 'abc']) expect(luhnValid(n)).toBe(false)
  })
})

describe('abaRoutingValid', () => {
  it('accepts valid routing numbers', () => {
    for (const n of ['011000015', '021000021', '111000025']) expect(abaRoutingValid(n)).toBe(true)
  })

  it('rejects a wrong checksum or length', () => {
    for (const n of ['011000016', '01100001', '0110000150', '01100001a']) expect(abaRoutingValid(n)).toBe(false)
  })
})

describe('registry', () => {
  it('lists token, card and bank', () => {
    expect(tokenTypeNames()).toEqual(['token', 'card', 'bank'])
    expect(getTokenType('nope')).toBeUndefined()
  })

  it('has exactly the types the REST contract accepts and documents', () => {
    expect(tokenTypeNames()).toEqual([...TOKEN_TYPE_NAMES])
  })

  it('gives each type its default container and fingerprint', () => {
    expect(getTokenType('token')).toMatchObject({ defaultContainers: ['/general/high/'], defaultFingerprintExpression: '{{ data | stringify }}', defaultMask: undefined, showsEvaluatedMask: false })
    expect(getTokenType('card')).toMatchObject({ defaultContainers: ['/pci/high/'], defaultFingerprintExpression: '{{ data.number }}', showsEvaluatedMask: true })
    expect(getTokenType('bank')).toMatchObject({ defaultContainers: ['/bank/high/'], defaultFingerprintExpression: '{{ data.account_number }}|{{ data.routing_number }}', showsEvaluatedMask: false })
  })

  it('has defaults that are valid expressions', () => {
    for (const name of tokenTypeNames()) {
      const type = getTokenType(name)!
      expect(validateExpression(type.defaultFingerprintExpression, 'fingerprint_expression')).toBeTypeOf('string')
      if (type.defaultMask !== undefined) validateMask(type.defaultMask, 'mask')
    }
  })

  it('freezes the defaults so callers cannot change them for everyone', () => {
    expect(() => getTokenType('card')!.defaultContainers.push('/x/')).toThrow(TypeError)
  })
})

describe('token type', () => {
  it('accepts any JSON value', () => {
    for (const data of ['x', 0, false, null, [1], { a: 1 }]) expect(errorsOf('token', data)).toBeUndefined()
  })

  it('requires data', () => {
    expect(errorsOf('token', undefined)).toEqual({ data: ['is required'] })
  })
})

describe('card type', () => {
  it('accepts a full card', () => {
    expect(errorsOf('card', { number: CARD, expiration_month: 12, expiration_year: 2030, cvc: '123' })).toBeUndefined()
  })

  it('accepts a number alone', () => {
    expect(errorsOf('card', { number: '4222222222222' })).toBeUndefined()
  })

  it('requires an object with a number', () => {
    expect(errorsOf('card', undefined)).toEqual({ data: ['is required'] })
    expect(errorsOf('card', CARD)).toEqual({ data: ['must be an object'] })
    expect(errorsOf('card', [CARD])).toEqual({ data: ['must be an object'] })
    expect(errorsOf('card', {})).toEqual({ 'data.number': ['is required'] })
  })

  it('rejects numbers that are not 13 to 19 digits or fail Luhn', () => {
    expect(errorsOf('card', { number: 4242424242424242 })).toHaveProperty(['data.number'])
    expect(errorsOf('card', { number: '4242-4242-4242-4242' })).toEqual({ 'data.number': ['must be a string of digits'] })
    expect(errorsOf('card', { number: '424242424242' })).toEqual({ 'data.number': ['must have 13 to 19 digits'] })
    expect(errorsOf('card', { number: '42424242424242424242' })).toEqual({ 'data.number': ['must have 13 to 19 digits'] })
    expect(errorsOf('card', { number: '4242424242424241' })).toEqual({ 'data.number': ['fails the Luhn check'] })
  })

  it('never echoes the card number in an error', () => {
    expect(JSON.stringify(errorsOf('card', { number: '4242424242424241', extra: 1 }))).not.toContain('4242424242424241')
  })

  it('rejects unknown fields', () => {
    expect(errorsOf('card', { number: CARD, name: 'x' })).toHaveProperty(['data.name'])
  })

  it('checks month, year and cvc shapes', () => {
    const errors = errorsOf('card', { number: CARD, expiration_month: 13, expiration_year: 30, cvc: 12 })
    expect(Object.keys(errors!).sort()).toEqual(['data.cvc', 'data.expiration_month', 'data.expiration_year'])
    expect(errorsOf('card', { number: CARD, expiration_month: '5' })).toHaveProperty(['data.expiration_month'])
    expect(errorsOf('card', { number: CARD, expiration_month: 0 })).toHaveProperty(['data.expiration_month'])
    expect(errorsOf('card', { number: CARD, cvc: '12345' })).toHaveProperty(['data.cvc'])
    expect(errorsOf('card', { number: CARD, cvc: '1234' })).toBeUndefined()
  })

  it('accepts expired cards: merchants keep them', () => {
    expect(errorsOf('card', { number: CARD, expiration_month: 12, expiration_year: 2019 })).toBeUndefined()
    expect(errorsOf('card', { number: CARD, expiration_year: 2001 })).toBeUndefined()
  })

  it('takes a cvc as a string or a number and stores it as a string', () => {
    const card = getTokenType('card')!
    expect(card.parseData({ number: CARD, cvc: 123 }, 'data')).toEqual({ number: CARD, cvc: '123' })
    expect(card.parseData({ number: CARD, cvc: 1234 }, 'data')).toEqual({ number: CARD, cvc: '1234' })
    expect(card.parseData({ number: CARD, cvc: '012' }, 'data')).toEqual({ number: CARD, cvc: '012' })
    expect(errorsOf('card', { number: CARD, cvc: 99 })).toHaveProperty(['data.cvc'])
    expect(errorsOf('card', { number: CARD, cvc: 12.5 })).toHaveProperty(['data.cvc'])
  })

  it('masks the number and keeps month and year as integers', () => {
    const card = getTokenType('card')!
    expect(evaluateMask(card.defaultMask, { number: CARD, expiration_month: 4, expiration_year: 2031 })).toEqual({
      number: 'XXXXXXXXXXXX4242',
      expiration_month: 4,
      expiration_year: 2031
    })
    expect(renderFingerprintSource(card.defaultFingerprintExpression, { number: CARD }, {})).toBe(CARD)
  })
})

describe('bank type', () => {
  it('accepts a valid routing and account number', () => {
    expect(errorsOf('bank', { routing_number: '011000015', account_number: '1' })).toBeUndefined()
    expect(errorsOf('bank', { routing_number: '011000015', account_number: '12345678901234567' })).toBeUndefined()
  })

  it('requires both fields', () => {
    expect(errorsOf('bank', {})).toEqual({ 'data.routing_number': ['is required'], 'data.account_number': ['is required'] })
  })

  it('rejects bad routing numbers', () => {
    expect(errorsOf('bank', { routing_number: '011000016', account_number: '1' })).toEqual({
      'data.routing_number': ['fails the ABA routing number checksum']
    })
    expect(errorsOf('bank', { routing_number: '01100001', account_number: '1' })).toHaveProperty(['data.routing_number'])
    expect(errorsOf('bank', { routing_number: 11000015, account_number: '1' })).toHaveProperty(['data.routing_number'])
  })

  it('rejects account numbers that are empty, too long or not digits', () => {
    for (const account_number of ['', '123456789012345678', '12-34', 1234]) {
      expect(errorsOf('bank', { routing_number: '011000015', account_number })).toHaveProperty(['data.account_number'])
    }
  })

  it('rejects unknown fields and non-objects', () => {
    expect(errorsOf('bank', { routing_number: '011000015', account_number: '1', name: 'x' })).toHaveProperty(['data.name'])
    expect(errorsOf('bank', 'x')).toEqual({ data: ['must be an object'] })
  })

  it('masks the account number and fingerprints account and routing', () => {
    const bank = getTokenType('bank')!
    const data = { routing_number: '011000015', account_number: '123456789' }
    expect(evaluateMask(bank.defaultMask, data)).toEqual({ routing_number: '011000015', account_number: 'XXXXX6789' })
    expect(renderFingerprintSource(bank.defaultFingerprintExpression, data, {})).toBe('123456789|011000015')
  })
})

describe('native default masks', () => {
  const withoutNulls = (value: unknown) => Object.fromEntries(Object.entries(value as object).filter(([, v]) => v !== null))
  const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^\\d{${min},${max}}$`))

  it('mask a card exactly as the default Liquid mask does', () => {
    const card = getTokenType('card')!
    fc.assert(
      fc.property(digits(13, 19), fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }), fc.option(fc.integer({ min: 2026, max: 2099 }), { nil: undefined }), (number, month, year) => {
        const data = { number, ...(month === undefined ? {} : { expiration_month: month }), ...(year === undefined ? {} : { expiration_year: year }) }
        expect(card.applyDefaultMask!(data)).toEqual(withoutNulls(evaluateMask(card.defaultMask, data)))
      })
    )
  })

  it('mask a bank account exactly as the default Liquid mask does', () => {
    const bank = getTokenType('bank')!
    fc.assert(
      fc.property(digits(9, 9), digits(1, 17), (routing, account) => {
        const data = { routing_number: routing, account_number: account }
        expect(bank.applyDefaultMask!(data)).toEqual(withoutNulls(evaluateMask(bank.defaultMask, data)))
      })
    )
  })

  it('render the default fingerprint exactly as its Liquid expression does', () => {
    const cases = [
      ['token', fc.jsonValue().filter((value) => value !== null)],
      ['card', digits(13, 19).map((number) => ({ number, expiration_month: 12, expiration_year: 2035 }))],
      ['bank', fc.tuple(digits(9, 9), digits(1, 17)).map(([routing_number, account_number]) => ({ routing_number, account_number }))]
    ] as const
    for (const [name, data] of cases) {
      const type = getTokenType(name)!
      fc.assert(
        fc.property(data, (value) => {
          expect(type.defaultFingerprintSource(value)).toBe(renderFingerprintSource(type.defaultFingerprintExpression, value, {}))
        })
      )
    }
  })
})
