/**
 * The cursors of the v2 token lists (`pagination.next`, sent back as `start`): the position of a page's
 * last token (its creation time and id, which callers may see anyway) and a keyed hash of it under the
 * tenant's fingerprint key, so a cursor that this vault did not give this tenant is refused, not followed.
 */
import { timingSafeEqual } from 'node:crypto'
import { keyedHash } from '../crypto/hashing'
import { ValidationError } from '../domain/errors'
import type { TokenPosition } from '../storage/repositories/tokens.repository'

/** Apart from fingerprints (`<type>\0…`) and search indexes (`index\0…`) under the same key. */
const macOf = (key: Uint8Array, payload: string) => keyedHash(key, `cursor\u0000${payload}`)

const refused = () => ValidationError.field('start', 'is not a cursor this list gave: pass `pagination.next` as it was returned')

export function writeCursor(key: Uint8Array, position: TokenPosition): string {
  const payload = Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url')
  return `${payload}.${macOf(key, payload)}`
}

export function readCursor(key: Uint8Array, cursor: string): TokenPosition {
  const [payload, mac, ...rest] = cursor.split('.')
  const expected = Buffer.from(macOf(key, payload))
  const given = Buffer.from(mac ?? '')
  if (rest.length > 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused()
  const position: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString())
  if (!Array.isArray(position) || !Number.isSafeInteger(position[0]) || typeof position[1] !== 'string') throw refused()
  return { createdAt: position[0], id: position[1] }
}
