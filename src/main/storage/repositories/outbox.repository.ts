import { sql, type Db } from '../connections'


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

export async function findOutboxMail(db: Db, id: string): Promise<OutboxRecord | undefined> {
  const row = await sql(db)('mail_outbox').where({ id }).first()
  return row && fromRow(row)
}

/** Ids of pending mails due at `now`, oldest first. */
export async function listDueOutboxIds(db: Db, now: number, limit: number): Promise<string[]> {
  const rows: { id: string }[] = await sql(db)('mail_outbox')
    .select('id')
    .where('status', 'PENDING')
    .andWhere('next_attempt_at', '<=', now)
    .orderBy([{ column: 'next_attempt_at', order: 'asc' }, { column: 'created_at', order: 'asc' }])
    .limit(limit)
  return rows.map((row) => row.id)
}

/**
 * Takes a due mail for one delivery attempt by pushing its `next_attempt_at`
 * to `leaseUntil`; 0 when another worker took it first or it is no longer due.
 */
export async function claimOutboxMail(db: Db, id: string, now: number, leaseUntil: number): Promise<number> {
  return sql(db)('mail_outbox')
    .where({ id, status: 'PENDING' })
    .andWhere('next_attempt_at', '<=', now)
    .update({ next_attempt_at: leaseUntil })
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
