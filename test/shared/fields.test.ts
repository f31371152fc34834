import { describe, expect, it } from 'vitest'
import { isEmailAddress } from '../../src/shared/contracts/fields'

describe('isEmailAddress', () => {
  it('accepts RFC 5322 addr-specs', () => {
    for (const address of ['ada@example.com', 'first.last+tag@sub.example.co.uk', "o'brien@example.ie", 'user@localhost', 'x@[192.0.2.1]']) {
      expect(isEmailAddress(address), address).toBe(true)
    }
  })

  it('refuses everything else', () => {
    for (const address of ['', 'ada', '@example.com', 'ada@', 'a..b@example.com', 'Ada <ada@example.com>', 'ada@example.com ', 'a@b.com, c@d.com', 'ada@exa mple.com']) {
      expect(isEmailAddress(address), address).toBe(false)
    }
  })
})
