/**
 * Actor ids (users, applications, sessions: UUIDs Tessera generates) are
 * stored as their 16 bytes rather than 36 characters. Only the canonical
 * lowercase form is accepted, so that the text read back is exactly the text
 * written: the audit chain's MACs cover it.
 */
const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const isCanonicalUuid = (id: string): boolean => CANONICAL.test(id)

/** Each hex digit's value, by character code (lowercase only: the only form accepted). */
const HEX_DIGIT_VALUES = new Uint8Array(128)
for (let digit = 0; digit < 16; digit++) HEX_DIGIT_VALUES['0123456789abcdef'.charCodeAt(digit)] = digit

const HYPHEN = 0x2d

/**
 * The 16 bytes of a UUID `isCanonicalUuid` accepted, read digit by digit: once per
 * audit entry (its actor and its trace id), and a third of the CPU of stripping the
 * hyphens and decoding the rest as hex.
 */
export function canonicalUuidBytes(id: string): Buffer {
  const bytes = Buffer.allocUnsafe(16)
  let digits = 0
  for (let at = 0; at < id.length; at++) {
    const code = id.charCodeAt(at)
    if (code === HYPHEN) continue
    const value = HEX_DIGIT_VALUES[code]
    if (digits % 2 === 0) bytes[digits >> 1] = value << 4
    else bytes[digits >> 1] |= value
    digits++
  }
  return bytes
}

export function uuidBytes(id: string | null): Buffer | null {
  if (id === null) return null
  if (!isCanonicalUuid(id)) throw new TypeError(`An actor id must be a lowercase UUID: ${JSON.stringify(id)}`)
  return canonicalUuidBytes(id)
}

export function uuidText(bytes: Uint8Array | null): string | null {
  if (bytes === null) return null
  const hex = Buffer.from(bytes).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
