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
 * Text kept or looked up as text: no NUL character. PostgreSQL's text cannot
 * hold one (SQLite's can), so both engines refuse it alike, as a 400.
 */
export function withoutNul<T extends z.ZodType<string>>(schema: T) {
  return schema.refine((value) => !value.includes('\u0000'), 'must not contain NUL characters')
}

/** An e-mail address. */
export const emailSchema = z
  .string()
  .max(254, 'must be at most 254 characters')
  .refine(isEmailAddress, 'must be a well-formed e-mail address (RFC 5322), such as ada@example.com')

/** The name of a tenant. */
export const tenantNameSchema = withoutNul(z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'))
