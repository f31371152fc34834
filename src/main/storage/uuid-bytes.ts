/**
 * Actor ids (users, applications, sessions: UUIDs Tessera generates) are
 * stored as their 16 bytes rather than 36 characters. Only the canonical
 * lowercase form is accepted, so that the text read back is exactly the text
 * written: the audit chain's MACs cover it.
 */
const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const isCanonicalUuid = (id: string): boolean => CANONICAL.test(id)

export function uuidBytes(id: string | null): Buffer | null {
  if (id === null) return null
  if (!isCanonicalUuid(id)) throw new TypeError(`An actor id must be a lowercase UUID: ${JSON.stringify(id)}`)
  return Buffer.from(id.replaceAll('-', ''), 'hex')
}

export function uuidText(bytes: Uint8Array | null): string | null {
  if (bytes === null) return null
  const hex = Buffer.from(bytes).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
