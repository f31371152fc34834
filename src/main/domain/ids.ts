/**
 * Ids that arrive in paths (`/applications/{id}`). A malformed one names no
 * entity: it is simply not found (404), like an unknown one.
 */
import { NotFoundError } from './errors'

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `value` is a UUID, as ids of applications, sessions and token intents are. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value)
}

/** The id of an entity with a UUID (application, session, member, invitation) as stored: lower case. */
export function uuidPathId(id: string, entity: string): string {
  if (!UUID_PATTERN.test(id)) throw new NotFoundError(entity)
  return id.toLowerCase()
}

/** Whether `id` could name a token: ids are at most 400 characters long, without control characters. */
export function couldBeTokenId(id: string): boolean {
  return id.length <= 400 && !CONTROL_CHARACTER.test(id)
}

/** A token id from a path; any other value names no token. */
export function tokenPathId(id: string): string {
  if (!couldBeTokenId(id)) throw new NotFoundError('Token')
  return id
}
