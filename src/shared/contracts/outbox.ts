/** The outbox of invitation mail, as the desktop app shows it (IPC only). */
import { z } from 'zod'
import { pageQuery } from './common'

export const OUTBOX_STATUSES = ['PENDING', 'SENT'] as const

/** The desktop's outbox list: waiting or sent mail, newest first. */
export const listOutboxQuery = z.strictObject({
  status: z.enum(OUTBOX_STATUSES, 'must be PENDING or SENT').optional(),
  ...pageQuery(100)
})

export type ListOutboxQuery = z.infer<typeof listOutboxQuery>

/**
 * One mail of the outbox (waiting or sent). Its body stays sealed in main; only
 * the invitation link is shown, so offline demos can follow an invitation.
 */
export interface OutboxMail {
  id: string
  recipient: string
  subject: string
  status: (typeof OUTBOX_STATUSES)[number]
  attempts: number
  created_at: string
  sent_at?: string
  /** When the next delivery attempt is due (waiting mail). */
  next_attempt_at?: string
  /** A short error code of the last failed attempt, never the server's text. */
  last_error?: string
  invitation_id?: string
  link?: string
}
