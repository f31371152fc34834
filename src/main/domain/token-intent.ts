/**
 * Token intents: what may be shown of the data they hold, and how long they live.
 * The details follow PCI DSS's display maximum (first six and last four digits of
 * a card number) and the bank token's default mask (last four of the account).
 */

/** An intent is deleted this long after it was created, converted or not. */
export const TOKEN_INTENT_LIFETIME_MS = 24 * 60 * 60 * 1000

export type TokenIntentDetails = Record<string, string | number>

/** The card's or bank account's masked details, under the key the response carries them (`card`, `bank`). */
export function tokenIntentDetails(type: string, data: unknown): TokenIntentDetails {
  const fields = data as Record<string, unknown>
  if (type === 'card') {
    const number = String(fields.number)
    return {
      bin: number.slice(0, 6),
      last4: number.slice(-4),
      ...(typeof fields.expiration_month === 'number' ? { expiration_month: fields.expiration_month } : {}),
      ...(typeof fields.expiration_year === 'number' ? { expiration_year: fields.expiration_year } : {})
    }
  }
  return { routing_number: String(fields.routing_number), account_number_last4: String(fields.account_number).slice(-4) }
}

/**
 * When an intent created at `now` is deleted: after its lifetime, or sooner when it holds a
 * card's CVC, whose retention window (PCI DSS 3.3.1.2) is at most as long.
 */
export function tokenIntentExpiry(now: number, cvcExpiresAt: number | null): number {
  return Math.min(now + TOKEN_INTENT_LIFETIME_MS, cvcExpiresAt ?? Infinity)
}
