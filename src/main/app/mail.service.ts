/**
 * Outgoing mail. Mail is never sent from inside a request: the
 * service that wants it sent writes it to the `mail_outbox` table in the same
 * transaction as the change it announces, so an invitation and its e-mail
 * exist together or not at all. A delivery worker then sends due mail over
 * SMTP (infra/mail-transport.ts), right after enqueueing and again from the jobs service,
 * retrying failures with exponential backoff. Without SMTP, mail waits in the
 * outbox (`tessera outbox` shows it, links included).
 *
 * A slow or stalling SMTP server holds up nothing else: each send has an overall
 * deadline, the jobs service starts delivery without waiting for it, and `close()`
 * drops a send still running after a short grace period.
 *
 * Bodies carry one-time links, so they are sealed with the tenant's data key
 * like token data; logs name an outbox id and an error code, nothing more.
 */
import type { Reader, Tx } from '../storage/connections'
import { openJson, sealJson } from '../crypto/aead'
import { newId } from '../crypto/random'
import {
  claimDueOutboxMail,
  insertOutboxMail,
  countOutboxMails,
  listOutboxMails,
  updateOutboxMail,
  type OutboxRecord,
  type OutboxStatus
} from '../storage/repositories/outbox.repository'
import type { ListOutboxQuery, OutboxMail } from '../../shared/contracts'
import type { Page } from '../../shared/types'
import { settlesWithin } from '../../shared/settles-within'
import { toIsoString } from '../domain/dates'
import { offsetOf, toPage } from '../domain/pagination'
import type { ServiceContext } from './service-context'
import type { Keyring } from './keyring'
import { createMailTransport, type MailConfig, type MailTransport, type OutgoingMessage } from '../infra/mail-transport'

/** What the body of an outbox mail holds (sealed). */
export interface MailBody {
  text: string
  html: string
  /** The one-time link the mail carries, kept apart so the outbox can show it. */
  link?: string
}

export interface OutgoingMail {
  tenantId: string
  recipient: string
  subject: string
  body: MailBody
  invitationId?: string
}

const DEFAULT_FROM = 'Tessera <tessera@localhost>'
const DEFAULT_BASE_URL = 'http://127.0.0.1:4390'
/** How long a delivery attempt holds a mail before another worker may retry it (a crash mid-send); always beyond the send deadline. */
const SEND_LEASE_MS = 5 * 60_000
const DEFAULT_SEND_TIMEOUT_MS = 60_000
const DEFAULT_CLOSE_GRACE_MS = 2_000
const FIRST_RETRY_MS = 30_000
const MAX_RETRY_MS = 60 * 60_000
const DELIVERY_BATCH = 50

/** Delay before attempt `attempts + 1`: 30 s, 1 min, 2 min, … capped at one hour. Mail is never dropped. */
export function retryDelayMs(attempts: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS)
}

const SAFE_CODE = /^[A-Za-z0-9_]{1,40}$/

/** An error's codes only (`ESOCKET:ECONNREFUSED`, `EENVELOPE:550`): SMTP replies may quote addresses or content. */
export function deliveryErrorCode(error: unknown): string {
  const e = error as { code?: unknown; originalCode?: unknown; responseCode?: unknown }
  const parts = [e?.code, e?.originalCode, e?.responseCode].map((part) => (typeof part === 'number' ? String(part) : part))
  const codes = parts.filter((part): part is string => typeof part === 'string' && SAFE_CODE.test(part))
  return codes.length ? [...new Set(codes)].join(':') : 'SEND_FAILED'
}

/** Associated data binding a sealed mail body to its outbox row. */
export const outboxContext = (id: string) => `outbox:${id}`

function openBody(keyring: Keyring, row: OutboxRecord): MailBody | undefined {
  try {
    return openJson<MailBody>(keyring.dataKey(row.tenant_id, row.key_version), row.sealed_body, outboxContext(row.id))
  } catch {
    return undefined
  }
}

/** A mail as the desktop and `tessera outbox` show it: its body stays sealed, only its link is opened. */
function toOutboxMail(keyring: Keyring, row: OutboxRecord): OutboxMail {
  const mail: OutboxMail = {
    id: row.id,
    recipient: row.recipient,
    subject: row.subject,
    status: row.status === 'SENT' ? 'SENT' : 'PENDING',
    attempts: row.attempts,
    created_at: toIsoString(row.created_at)
  }
  if (row.sent_at !== null) mail.sent_at = toIsoString(row.sent_at)
  else mail.next_attempt_at = toIsoString(row.next_attempt_at)
  if (row.last_error) mail.last_error = row.last_error
  if (row.invitation_id) mail.invitation_id = row.invitation_id
  const link = openBody(keyring, row)?.link
  if (link) mail.link = link
  return mail
}

/**
 * Waiting and sent mail (cancelled mail carries dead links and is left out),
 * or only those of `query.status`, newest first, with links decrypted. Takes
 * only a reader and the keys, so `tessera outbox` can read it while another
 * process serves the vault.
 */
export async function readOutbox(db: Reader, keyring: Keyring, query: ListOutboxQuery): Promise<Page<OutboxMail>> {
  const statuses: OutboxStatus[] = query.status ? [query.status] : ['PENDING', 'SENT']
  const [total, rows] = await Promise.all([countOutboxMails(db, statuses), listOutboxMails(db, statuses, query.size, offsetOf(query))])
  return toPage(
    rows.map((row) => toOutboxMail(keyring, row)),
    total,
    query
  )
}

/** An error carrying only `code`, as `deliveryErrorCode` records it. */
const codedError = (code: string, message: string) => Object.assign(new Error(message), { code })

export class MailService {
  private readonly transport: MailTransport | undefined
  private readonly sendTimeoutMs: number
  private readonly closeGraceMs: number
  /** Aborted by `close()` once its grace period is over: drops the send in flight. */
  private readonly shutdown = new AbortController()
  private serviceUrl = DEFAULT_BASE_URL
  /** Delivery runs one at a time, so a mail is never sent twice by this process. */
  private queue: Promise<unknown> = Promise.resolve()
  private kickQueued = false
  private closed = false

  constructor(
    private readonly context: ServiceContext,
    private readonly config: MailConfig = {}
  ) {
    this.transport = createMailTransport(config)
    this.sendTimeoutMs = config.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS
    this.closeGraceMs = config.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS
  }

  /** Whether SMTP is configured (otherwise mail waits in the outbox). */
  get smtpConfigured(): boolean {
    return this.transport !== undefined
  }

  /** Tells the service its own URL once it listens: the default base of links. */
  useServiceUrl(url: string): void {
    this.serviceUrl = url
  }

  /** An absolute URL for `path` (which starts with `/`) under the public base URL. */
  publicUrl(path: string): string {
    return (this.config.publicBaseUrl ?? this.serviceUrl).replace(/\/+$/, '') + path
  }

  /** Queues a mail inside the caller's transaction; call `kick()` after the commit. */
  async enqueue(trx: Tx, mail: OutgoingMail, now: number): Promise<string> {
    const id = newId()
    const { version, key } = this.context.keyring.currentDataKey(mail.tenantId)
    const row: OutboxRecord = {
      id,
      tenant_id: mail.tenantId,
      recipient: mail.recipient,
      subject: mail.subject,
      sealed_body: Buffer.from(sealJson(key, mail.body, outboxContext(id))),
      key_version: version,
      status: 'PENDING',
      attempts: 0,
      next_attempt_at: now,
      last_error: null,
      invitation_id: mail.invitationId ?? null,
      created_at: now,
      sent_at: null
    }
    await insertOutboxMail(trx, row)
    return id
  }

  /**
   * Starts delivering due mail in the background (after an enqueue has committed, and
   * from the `deliver-mail` sweep, which must not wait for an SMTP server).
   */
  kick(): void {
    if (!this.transport || this.closed || this.kickQueued) return
    this.kickQueued = true
    this.deliverDue().catch((error: Error & { code?: string }) => {
      this.context.logger.error({ err: { name: error.name, code: error.code } }, 'mail delivery run failed')
    })
  }

  /** Sends every due pending mail (oldest first); resolves with how many were sent. */
  deliverDue(limit = DELIVERY_BATCH): Promise<number> {
    const run = this.queue.then(() => {
      this.kickQueued = false
      return this.transport && !this.closed ? this.deliverBatch(this.transport, limit) : 0
    })
    this.queue = run.catch(() => undefined)
    return run
  }

  /** Resolves once no delivery is running or queued. */
  async idle(): Promise<void> {
    let current: Promise<unknown>
    do {
      current = this.queue
      await current
    } while (current !== this.queue)
  }

  /**
   * Stops delivering (shutdown): gives a running attempt the grace period, then drops its
   * connection (the mail stays due and is retried), and closes the transport.
   */
  async close(): Promise<void> {
    this.closed = true
    if (!(await settlesWithin(this.idle(), this.closeGraceMs))) {
      this.shutdown.abort(codedError('SMTP_SHUTDOWN', 'the service stopped during the send'))
    }
    await this.idle()
    this.transport?.close()
  }

  /** Waiting and sent mail, newest first, links decrypted (see `readOutbox`). */
  listOutbox(query: ListOutboxQuery): Promise<Page<OutboxMail>> {
    return readOutbox(this.context.reader, this.context.keyring, query)
  }

  /** Up to `limit` delivery attempts, each at the oldest due mail this instance claims. */
  private async deliverBatch(transport: MailTransport, limit: number): Promise<number> {
    const { writes, clock } = this.context
    let sent = 0
    for (let attempt = 0; attempt < limit && !this.closed; attempt++) {
      const now = clock.now()
      const row = await writes.run((trx) => claimDueOutboxMail(trx, now, now + Math.max(SEND_LEASE_MS, 2 * this.sendTimeoutMs)))
      if (!row) break
      if (await this.deliverOne(transport, row)) sent++
    }
    return sent
  }

  /** One attempt at one claimed mail; true when it was sent. */
  private async deliverOne(transport: MailTransport, row: OutboxRecord): Promise<boolean> {
    const { writes, clock, logger } = this.context
    const id = row.id
    const attempts = Number(row.attempts) + 1
    try {
      const body = openBody(this.context.keyring, row)
      if (!body) throw Object.assign(new Error('unreadable body'), { code: 'BODY_UNREADABLE' })
      await this.sendWithinDeadline(transport, { from: this.config.from ?? DEFAULT_FROM, to: row.recipient, subject: row.subject, text: body.text, html: body.html })
    } catch (error) {
      const code = deliveryErrorCode(error)
      const retryAt = clock.now() + retryDelayMs(attempts)
      await writes.run((trx) => updateOutboxMail(trx, id, { attempts, last_error: code, next_attempt_at: retryAt }))
      logger.warn({ outboxId: id, attempts, code }, 'mail delivery failed; will retry')
      return false
    }
    await writes.run((trx) => updateOutboxMail(trx, id, { status: 'SENT', attempts, last_error: null, sent_at: clock.now() }))
    logger.info({ outboxId: id, attempts }, 'mail delivered')
    return true
  }

  /**
   * One send, dropped (its connection closed) when the deadline passes or the service
   * stops: a server that keeps the connection alive without finishing holds a mail no longer.
   */
  private async sendWithinDeadline(transport: MailTransport, message: OutgoingMessage): Promise<void> {
    const attempt = new AbortController()
    const deadline = setTimeout(() => attempt.abort(codedError('SMTP_TIMEOUT', 'the send took longer than its deadline')), this.sendTimeoutMs)
    const onShutdown = () => attempt.abort(this.shutdown.signal.reason)
    if (this.shutdown.signal.aborted) onShutdown()
    else this.shutdown.signal.addEventListener('abort', onShutdown, { once: true })
    try {
      await new Promise<void>((resolve, reject) => {
        // Settles on abort even if the transport were to ignore the signal.
        if (attempt.signal.aborted) return reject(attempt.signal.reason)
        attempt.signal.addEventListener('abort', () => reject(attempt.signal.reason), { once: true })
        transport.send(message, attempt.signal).then(resolve, reject)
      })
    } finally {
      clearTimeout(deadline)
      this.shutdown.signal.removeEventListener('abort', onShutdown)
    }
  }
}
