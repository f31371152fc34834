/**
 * Field checks shared by the services, the desktop IPC and the CLI, so an
 * invitation and `tessera init --owner-email` accept exactly the same
 * addresses. Messages complete "<field> …".
 */
import { parseOneAddress } from 'email-addresses'
import { z } from 'zod'

/**
 * A single RFC 5322 addr-spec (`local@domain`): no display name, comments or
 * surrounding whitespace, and within the SMTP length limits (RFC 5321).
 */
export function isEmailAddress(value: string): boolean {
  const parsed = parseOneAddress({ input: value, rfc6532: true })
  if (!parsed || parsed.type !== 'mailbox' || parsed.name !== null || parsed.address !== value) return false
  return parsed.local.length <= 64 && parsed.domain.length <= 255 && value.length <= 254
}

/**
 * A mailbox as a From header holds it: an address, optionally with a display
 * name (`Tessera <vault@example.com>`). `TESSERA_SMTP_FROM` and the desktop's
 * SMTP settings accept exactly these.
 */
export function isMailbox(value: string): boolean {
  return parseOneAddress(value)?.type === 'mailbox'
}

/**
 * Text kept or looked up as text: no NUL character. PostgreSQL's text cannot
 * hold one (SQLite's can), so both engines refuse it alike, as a 400.
 */
export function withoutNul<T extends z.ZodType<string>>(schema: T) {
  return schema.refine((value) => !value.includes('\u0000'), 'must not contain NUL characters')
}

/**
 * Characters people cannot see that change how the text around them reads:
 * Unicode format characters (`\p{Cf}`: bidi overrides and isolates, zero-width
 * spaces and joiners, the byte order mark …), the C1 controls, and the line and
 * paragraph separators (U+2028, U+2029), which break a line mid-text. In an id, a
 * name or a metadata value they make one text look like another (`cust-1001`
 * and `cust-1001` plus a zero-width space), or reverse it and the sentence it
 * is shown in. Refused in every caller text the desktop shows.
 */
export const INVISIBLE_CHARACTERS = /[\p{Cf}\u0080-\u009f\u2028\u2029]/u

export const INVISIBLE_CHARACTERS_MESSAGE = 'must not contain invisible formatting characters (bidi overrides and isolates, zero-width characters, C1 controls, line separators)'

/** Text people read and compare: no invisible formatting character (see INVISIBLE_CHARACTERS). */
export function withoutInvisibleCharacters<T extends z.ZodType<string>>(schema: T) {
  return schema.refine((value) => !INVISIBLE_CHARACTERS.test(value), INVISIBLE_CHARACTERS_MESSAGE)
}

/** Text kept and shown to people: neither NUL nor invisible formatting characters. */
export function shownText<T extends z.ZodType<string>>(schema: T) {
  return withoutInvisibleCharacters(withoutNul(schema))
}

/** Control characters (C0, DEL, C1): a line break or a terminal escape in a name forges the lines it is printed in. */
const CONTROL_CHARACTERS = /\p{Cc}/u

/**
 * A name people read on one line (a tenant, an application, a webhook, a person), in the window, a
 * mail's text and `tessera outbox`: shown text without control characters.
 */
export function nameText<T extends z.ZodType<string>>(schema: T) {
  return shownText(schema).refine((value) => !CONTROL_CHARACTERS.test(value), 'must not contain control characters (line breaks, tabs, escapes)')
}

/** An e-mail address. */
export const emailSchema = z
  .string()
  .max(254, 'must be at most 254 characters')
  .refine(isEmailAddress, 'must be a well-formed e-mail address (RFC 5322), such as ada@example.com')

/** The name of a tenant. */
export const tenantNameSchema = nameText(z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'))
