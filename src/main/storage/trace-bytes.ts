/**
 * A request's trace id (`BT-TRACE-ID`: printable ASCII, at most 128
 * characters) as an audit entry stores it. Most are UUIDs Tessera generated,
 * so a lowercase UUID is kept as its 16 bytes; any other id as its UTF-8
 * bytes, with a NUL byte added when they are exactly 16 (a printable id holds
 * no NUL), so a 16-byte value always reads as a UUID and no tag byte is spent
 * on every entry. The text read back is exactly the text written: the audit
 * chain's MACs cover it.
 */
import { canonicalUuidBytes, isCanonicalUuid, uuidText } from './uuid-bytes'

const UUID_BYTES = 16
const NUL = 0

export function traceBytes(id: string | null | undefined): Buffer | null {
  if (id === null || id === undefined) return null
  if (isCanonicalUuid(id)) return canonicalUuidBytes(id)
  const text = Buffer.from(id, 'utf8')
  return text.length === UUID_BYTES ? Buffer.concat([text, Buffer.of(NUL)]) : text
}

export function traceText(bytes: Uint8Array | null): string | null {
  if (bytes === null) return null
  if (bytes.length === UUID_BYTES) return uuidText(bytes)
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  return text.toString('utf8', 0, text.length === UUID_BYTES + 1 && text[UUID_BYTES] === NUL ? UUID_BYTES : text.length)
}
