import { sql, type Db, type Tx } from '../connections'
import { lockingRows } from '../dialect'


export type OutboxStatus = 'PENDING' | 'SENT' | 'CANCELLED'

/** A mail waiting in (or delivered from) the outbox; the body is sealed with the tenant's data key. */
export interface OutboxRecord {
  id: string
  tenant_id: string
  recipient: string
  subject: string
  sealed_body: Buffer
  key_version: number
  status: OutboxStatus
  attempts: number
  next_attempt_at: number
  last_error: string | null
  invitation_id: string | null
  created_at: number
  sent_at: number | null
}

/** Numbers as numbers, whatever the driver returns for integer columns. */
function fromRow(row: OutboxRecord): OutboxRecord {
  return {
    ...row,
    key_version: Number(row.key_version),
    attempts: Number(row.attempts),
    next_attempt_at: Number(row.next_attempt_at),
    created_at: Number(row.created_at),
    sent_at: row.sent_at === null ? null : Number(row.sent_at)
  }
}

export async function insertOutboxMail(db: Db, row: OutboxRecord): Promise<void> {
  await sql(db)('mail_outbox').insert(row)
}

/**
 * Takes the oldest mail due at `now` for one delivery attempt, in the caller's transaction, by
 * pushing its `next_attempt_at` to `leaseUntil`; undefined when none is due. Instances sharing
 * the database pass over a due mail another one is claiming (`FOR UPDATE SKIP LOCKED`), and the
 * update re-checks due-ness, so each attempt at a mail is made by one instance.
 */
export async function claimDueOutboxMail(tx: Tx, now: number, leaseUntil: number): Promise<OutboxRecord | undefined> {
  const db = sql(tx)
  const due = db('mail_outbox')
    .select('id')
    .where('status', 'PENDING')
    .andWhere('next_attempt_at', '<=', now)
    .orderBy([{ column: 'next_attempt_at', order: 'asc' }, { column: 'created_at', order: 'asc' }])
    .limit(1)
  const [row] = await db('mail_outbox')
    .where('id', lockingRows(db, due, { skipLocked: true }))
    .andWhere('status', 'PENDING')
    .andWhere('next_attempt_at', '<=', now)
    .update({ next_attempt_at: leaseUntil })
    .returning('*')
  return row && fromRow(row as OutboxRecord)
}

export async function updateOutboxMail(db: Db, id: string, changes: Partial<OutboxRecord>): Promise<number> {
  return sql(db)('mail_outbox').where({ id }).update(changes)
}

/** Cancels the pending mails of invitations, so outdated links are never delivered. */
export async function cancelInvitationMails(db: Db, invitationIds: string[]): Promise<number> {
  if (!invitationIds.length) return 0
  return sql(db)('mail_outbox').whereIn('invitation_id', invitationIds).andWhere('status', 'PENDING').update({ status: 'CANCELLED' })
}

/** How many mails have the given statuses. */
export async function countOutboxMails(db: Db, statuses: OutboxStatus[]): Promise<number> {
  const row = await sql(db)('mail_outbox').whereIn('status', statuses).count({ count: '*' }).first()
  return Number(row?.count ?? 0)
}

/** Mails with the given statuses, newest first. */
export async function listOutboxMails(db: Db, statuses: OutboxStatus[], limit: number, offset: number): Promise<OutboxRecord[]> {
  const rows: OutboxRecord[] = await sql(db)('mail_outbox')
    .whereIn('status', statuses)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'asc' }])
    .limit(limit)
    .offset(offset)
  return rows.map(fromRow)
}
