/**
 * `tessera outbox [--data-dir DIR] [--json]`: the mail waiting in and sent
 * from the outbox, with each invitation's link decrypted, so an offline demo
 * can follow an invitation without a mail server. Reads only; safe while
 * `tessera serve` runs on the same data dir.
 */
import type { OutboxMail } from '../../shared/contracts'
import type { CommandInput } from './commands'
import { printable } from './printable'
import { placeOf, withUnlockedVault } from './vault-access'

/** The newest mails shown. */
const SHOWN = 200

function toJson(mail: OutboxMail) {
  return {
    id: mail.id,
    status: mail.status,
    recipient: mail.recipient,
    subject: mail.subject,
    link: mail.link ?? null,
    invitation_id: mail.invitation_id ?? null,
    attempts: mail.attempts,
    next_attempt_at: mail.next_attempt_at ?? null,
    last_error: mail.last_error ?? null,
    created_at: mail.created_at,
    sent_at: mail.sent_at ?? null
  }
}

function toText(entries: OutboxMail[]): string {
  const waiting = entries.filter((entry) => entry.status === 'PENDING').length
  const lines = [`Outbox: ${waiting} waiting, ${entries.length - waiting} sent`]
  for (const entry of entries) {
    lines.push('')
    lines.push(`${entry.status === 'PENDING' ? 'WAITING' : 'SENT'}  ${entry.created_at}  to ${printable(entry.recipient)}`)
    lines.push(`  Subject: ${printable(entry.subject)}`)
    if (entry.link) lines.push(`  Link:    ${printable(entry.link)}`)
    if (entry.status === 'SENT') lines.push(`  Sent at ${entry.sent_at} after ${entry.attempts} attempt(s)`)
    else if (entry.attempts > 0) lines.push(`  ${entry.attempts} failed attempt(s), last error ${entry.last_error ?? null}; next attempt ${entry.next_attempt_at}`)
    else lines.push('  Not attempted yet (no SMTP configured, or waiting for the service)')
  }
  return lines.join('\n') + '\n'
}

export async function outbox({ options }: CommandInput): Promise<void> {
  await withUnlockedVault(placeOf(options), async (vault) => {
    const entries = await vault.outbox(SHOWN)
    process.stdout.write(options.json ? JSON.stringify({ mails: entries.map(toJson) }) + '\n' : toText(entries))
  })
}
