import { describe, expect, it } from 'vitest'
import type { StoredToken } from '../../src/main/domain/token'
import type { Transform } from '../../src/shared/types'
import { toWireToken, viewReadsData } from '../../src/main/domain/token-view'

function row(type: string, mask: unknown): StoredToken {
  return {
    tenant_id: '00000000-0000-4000-8000-000000000001',
    id: 'tok-1',
    type,
    key_version: 1,
    sealed_data: Buffer.alloc(0),
    fingerprint: 'f',
    fingerprint_expression: '{{ data }}',
    mask: mask === undefined ? null : mask,
    containers: ['/general/high/'],
    metadata: {},
    search_indexes: null,
    expires_at: null,
    cvc_expires_at: null,
    created_by: null,
    created_at: Date.parse('2026-11-25T12:00:00Z'),
    modified_by: null,
    modified_at: null
  }
}

describe('toWireToken', () => {
  it('shows the evaluated mask in data under mask, and the plaintext under reveal', () => {
    const token = row('token', '{{ data | reveal_last: 2 }}')
    expect(toWireToken(token, 'secret', 'mask', { single: false }).data).toBe('XXXXet')
    expect(toWireToken(token, 'secret', 'reveal', { single: false }).data).toBe('secret')
    expect(toWireToken(token, 'secret', 'redact', { single: false })).not.toHaveProperty('data')
  })

  it('leaves data out, never plain, when the mask cannot be evaluated on the data', () => {
    const token = row('token', '{{ data | to_number }}')
    const view = toWireToken(token, 'not a number', 'mask', { single: false })
    expect(view).not.toHaveProperty('data')
    expect(view.mask).toBe('{{ data | to_number }}')
  })

  it('leaves the masked card values out when the card mask cannot be evaluated', () => {
    const card = row('card', { number: '{{ data.number | card_mask }}', month: '{{ data.expiration_month | card_mask }}' })
    const data = { number: '4242424242424242', expiration_month: 12 }
    const masked = toWireToken(card, data, 'mask', { single: true })
    expect(masked).not.toHaveProperty('data')
    expect(masked).not.toHaveProperty('mask')
    const revealed = toWireToken(card, data, 'reveal', { single: true })
    expect(revealed.data).toEqual(data)
    expect(revealed).not.toHaveProperty('mask')
  })

  it('reads a stored card mask that shows more than the first 6 and last 4 digits as the default mask', () => {
    // Stored before masks were held to the maximum, e.g. by an updater that could not reveal.
    const card = row('card', { n: '{{ data.number }}', c: '{{ data.cvc }}' })
    const data = { number: '4242424242424242', cvc: '123', expiration_month: 12 }
    const view = { number: 'XXXXXXXXXXXX4242', expiration_month: 12 }
    expect(toWireToken(card, data, 'mask', { single: false }).data).toEqual(view)
    expect(toWireToken(card, data, 'reveal', { single: true }).mask).toEqual(view)
  })
})

describe('viewReadsData', () => {
  const card = { number: '4242424242424242', expiration_month: 12 }
  const tokens: [string, StoredToken, unknown][] = [
    ['a token without a mask', row('token', undefined), 'secret'],
    ['a token with a mask', row('token', '{{ data | reveal_last: 2 }}'), 'secret'],
    ['a card with its default mask', row('card', { number: '{{ data.number | card_mask }}', expiration_month: '{{ data.expiration_month }}' }), card],
    ['a card without a mask', row('card', undefined), card]
  ]
  const transforms: Transform[] = ['redact', 'mask', 'reveal']

  it('is false only where the view shows the same without the data', () => {
    for (const [name, token, data] of tokens) {
      for (const transform of transforms) {
        for (const single of [false, true]) {
          if (viewReadsData(token, transform, { single })) continue
          const context = `${name}, ${transform}, ${single ? 'single' : 'list'}`
          expect(toWireToken(token, undefined, transform, { single }), context).toEqual(toWireToken(token, data, transform, { single }))
        }
      }
    }
  })

  it('is false for a masked token without a mask and a redacted one, true for a masked token with a mask and a revealed one', () => {
    expect(viewReadsData(row('token', undefined), 'mask', { single: false })).toBe(false)
    expect(viewReadsData(row('token', '{{ data }}'), 'redact', { single: false })).toBe(false)
    expect(viewReadsData(row('token', '{{ data | reveal_last: 2 }}'), 'mask', { single: false })).toBe(true)
    expect(viewReadsData(row('token', undefined), 'reveal', { single: false })).toBe(true)
  })
})
