import { describe, expect, it } from 'vitest'
import { assertMetadataFreeOfSecrets, secretsOf } from '../../src/main/domain/metadata-secrets'
import { getTokenType } from '../../src/main/domain/token-types'

const CARD = '4242424242424242'

/** Whether `value` is accepted as metadata of a token of `type` holding `data`. */
function accepted(type: string, data: unknown, value: string): boolean {
  try {
    assertMetadataFreeOfSecrets(value, secretsOf(getTokenType(type)!, data), 'metadata.note')
    return true
  } catch {
    return false
  }
}

describe('metadata secrets', () => {
  it.each([CARD, '4242 4242 4242 4242', '4242-4242-4242-4242', 'card: 4242.4242.4242.4242 (Visa)', `x${CARD}0`])('refuses a card number: %s', (value) => {
    expect(accepted('card', { number: CARD }, value)).toBe(false)
  })

  it.each(['4242', 'ending 4242, expires 12/2030', '4242 4242', 'order 4242424242'])('accepts what is not the whole card number: %s', (value) => {
    expect(accepted('card', { number: CARD }, value)).toBe(true)
  })

  it('refuses an account number, a short one only as a whole run, and never the routing number', () => {
    const bank = (account_number: string) => ({ routing_number: '021000021', account_number })
    expect(accepted('bank', bank('123456789'), 'acct 123-456-789')).toBe(false)
    expect(accepted('bank', bank('1234'), 'acct 1234')).toBe(false)
    expect(accepted('bank', bank('1234'), 'invoice 2023-12-34')).toBe(true)
    expect(accepted('bank', bank('123456789'), '021000021')).toBe(true)
  })

  it('refuses a CVC as a whole value but not a number that contains it', () => {
    expect(accepted('card', { number: CARD, cvc: '123' }, ' 123 ')).toBe(false)
    expect(accepted('card', { number: CARD, cvc: '123' }, 'room 123')).toBe(true)
  })

  it('refuses the whole data of a generic token and its strings, never shared words', () => {
    expect(accepted('token', 'Sensitive Value', 'Sensitive Value')).toBe(false)
    expect(accepted('token', 'Sensitive Value', 'Non-Sensitive Value')).toBe(true)
    expect(accepted('token', { name: 'Ada Lovelace', plan: 'pro' }, 'Ada Lovelace')).toBe(false)
    expect(accepted('token', { name: 'Ada Lovelace', plan: 'pro' }, '{"name":"Ada Lovelace","plan":"pro"}')).toBe(false)
    expect(accepted('token', { name: 'Ada Lovelace', plan: 'pro' }, 'pro')).toBe(true)
    expect(accepted('token', 12345678, '12345678')).toBe(false)
  })
})
