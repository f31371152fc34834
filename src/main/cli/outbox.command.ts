/**
 * `tessera outbox [--data-dir DIR] [--json]`: the mail waiting in and sent
 * from the outbox, with each invitation's link decrypted, so an offline demo
 * can follow an invitation without a mail server. Reads only; safe while
 * `tessera serve` runs on the same data dir.
 */
import { readOutbox, type OutboxEntry } from '../app/mail.service'
import type { CommandInput } from './commands'
import { withUnlockedDatabase } from './vault-access'

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString()
}

function toJson(entry: OutboxEntry) {
  return {
    id: entry.id,
    status: entry.status,
    recipient: entry.recipient,
    subject: entry.subject,
    link: entry.link ?? null,
    invitation_id: entry.invitation_id,
    attempts: entry.attempts,
    next_attempt_at: entry.status === 'PENDING' ? iso(entry.next_attempt_at) : null,
    last_error: entry.last_error,
    created_at: iso(entry.created_at),
    sent_at: iso(entry.sent_at)
  }
}

function toText(entries: OutboxEntry[]): string {
  const waiting = entries.filter((entry) => entry.status === 'PENDING').length
  const lines = [`Outbox: ${waiting} waiting, ${entries.length - waiting} sent`]
  for (const entry of entries) {
    lines.push('')
    lines.push(`${entry.status === 'PENDING' ? 'WAITING' : 'SENT'}  ${iso(entry.created_at)}  to ${entry.recipient}`)
    lines.push(`  Subject: ${entry.subject}`)
    if (entry.link) lines.push(`  Link:    ${entry.link}`)
    if (entry.status === 'SENT') lines.push(`  Sent at ${iso(entry.sent_at)} after ${entry.attempts} attempt(s)`)
    else if (entry.attempts > 0) lines.push(`  ${entry.attempts} failed attempt(s), last error ${entry.last_error}; next attempt ${iso(entry.next_attempt_at)}`)
    else lines.push('  Not attempted yet (no SMTP configured, or waiting for the service)')
  }
  return lines.join('\n') + '\n'
}

export async function outbox({ options }: CommandInput): Promise<void> {
  await withUnlockedDatabase(options['data-dir'] as string, async (db, keyring) => {
    const entries = await readOutbox(db.reader, keyring)
    process.stdout.write(options.json ? JSON.stringify({ mails: entries.map(toJson) }) + '\n' : toText(entries))
  })
}
