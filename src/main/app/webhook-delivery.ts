/**
 * Delivers webhook events from the `webhook_deliveries` outbox: claims a due
 * delivery (one instance per attempt), signs the body with the vault's key,
 * POSTs it through the SSRF-guarded transport, and records the attempt in the
 * delivery log. Failures are retried with exponential backoff up to
 * `maxAttempts`, then the delivery is `failed`; a host that is not allowed
 * makes it `blocked` at once (nothing is sent, retrying would not help).
 */
import { toIsoString } from '../domain/dates'
import { deliveryBody, type WebhookEvent } from '../domain/webhook-events'
import { signBody } from '../crypto/webhook-signing'
import { parseWebhookAllowList, sendWebhook, type SendOutcome, type WebhookAllowList } from '../infra/webhook-transport'
import { claimDueDelivery, findWebhook, hasDueDelivery, recordDeliveryAttempt, type DeliveryAttemptRecord, type DeliveryRecord } from '../storage/repositories/webhooks.repository'
import type { ServiceContext } from './service-context'
import type { WebhookEvents } from './webhook-events'
import type { WebhookSigningKey } from './webhook-signing-key'

/** The value of `BT-SIGNATURE-VERSION`: RSA-PSS/SHA-256 over the canonical body (docs/basis-theory.md). */
export const SIGNATURE_VERSION = 'tessera-rsa-pss-sha256-v1'

export interface WebhookDeliveryConfig {
  /** `--webhook-allowed-hosts`: host names, addresses and ranges besides loopback. */
  allowedHosts?: readonly string[]
  /** Delay before the second attempt; doubles after each failure (30 s by default). */
  retryBaseMs?: number
  /** Attempts before a delivery is given up (8 by default). */
  maxAttempts?: number
  /** How long one POST may take (10 s by default). */
  timeoutMs?: number
  /** How often due deliveries are looked for while any webhook is enabled (1 s by default). */
  pollMs?: number
}

const DEFAULTS = { retryBaseMs: 30_000, maxAttempts: 8, timeoutMs: 10_000, pollMs: 1_000 }
const MAX_RETRY_MS = 60 * 60_000
/** How long a claimed delivery is held beyond its POST's time-out before another worker may retry it (a crash mid-send). */
const LEASE_MARGIN_MS = 80_000
const BATCH = 50

/** Delay after failed attempt number `attempts`: base, 2×base, 4×base…, capped at an hour. */
export function webhookRetryDelayMs(attempts: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS)
}

export class WebhookDelivery {
  private readonly allow: WebhookAllowList
  private readonly settings: typeof DEFAULTS
  private queue: Promise<unknown> = Promise.resolve()
  private kickQueued = false
  private closed = false
  private timer: NodeJS.Timeout | undefined
  private kickTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly context: ServiceContext,
    private readonly events: WebhookEvents,
    private readonly signingKey: WebhookSigningKey,
    config: WebhookDeliveryConfig = {}
  ) {
    this.allow = parseWebhookAllowList(config.allowedHosts ?? [])
    this.settings = {
      retryBaseMs: config.retryBaseMs ?? DEFAULTS.retryBaseMs,
      maxAttempts: config.maxAttempts ?? DEFAULTS.maxAttempts,
      timeoutMs: config.timeoutMs ?? DEFAULTS.timeoutMs,
      pollMs: config.pollMs ?? DEFAULTS.pollMs
    }
    // Shortly after an emit (its transaction commits within a group-commit turn); the poll catches any later.
    events.onEmitted(() => this.kickSoon())
  }

  /** Polls for due deliveries (retries included) while any webhook is enabled; the timer does not keep the process alive. */
  start(): void {
    if (this.timer || this.closed) return
    this.timer = setInterval(() => {
      if (this.events.anySubscribed) this.kick()
    }, this.settings.pollMs)
    this.timer.unref()
    if (this.events.anySubscribed) this.kick()
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    if (this.kickTimer) clearTimeout(this.kickTimer)
    await this.queue
  }

  private kickSoon(): void {
    if (this.kickTimer || this.closed) return
    this.kickTimer = setTimeout(() => {
      this.kickTimer = undefined
      this.kick()
    }, 20)
    this.kickTimer.unref()
  }

  /** Starts delivering due events in the background. */
  kick(): void {
    if (this.closed || this.kickQueued) return
    this.kickQueued = true
    this.deliverDue().catch((error: Error & { code?: string }) => {
      this.context.logger.error({ err: { name: error.name, code: error.code } }, 'webhook delivery run failed')
    })
  }

  /** Attempts every due delivery, one at a time; resolves with how many were delivered. The `deliver-webhooks` sweep. */
  deliverDue(limit = BATCH): Promise<number> {
    const run = this.queue.then(async () => {
      this.kickQueued = false
      let delivered = 0
      if (!(await hasDueDelivery(this.context.reader, this.context.clock.now()))) return 0
      for (let n = 0; n < limit && !this.closed; n++) {
        const now = this.context.clock.now()
        const delivery = await this.context.writes.run((trx) => claimDueDelivery(trx, now, now + this.settings.timeoutMs + LEASE_MARGIN_MS))
        if (!delivery) break
        if (await this.attempt(delivery)) delivered++
      }
      return delivered
    })
    this.queue = run.catch(() => undefined)
    return run
  }

  /** One attempt at one claimed delivery; true when it was delivered. */
  private async attempt(delivery: DeliveryRecord): Promise<boolean> {
    const { clock, reader, writes, logger } = this.context
    const webhook = await findWebhook(reader, delivery.tenant_id, delivery.webhook_id)
    const started = clock.now()
    const startedTick = performance.now()
    let result: SendOutcome
    if (!webhook) {
      result = { outcome: 'failed', error: 'WEBHOOK_DELETED' }
    } else {
      const body = deliveryBody(delivery.event as unknown as WebhookEvent, toIsoString(started))
      const signature = signBody(await this.signingKey.privateKey(delivery.tenant_id), body)
      result = await sendWebhook(
        {
          url: webhook.url,
          body,
          timeoutMs: this.settings.timeoutMs,
          headers: { 'content-type': 'application/json', 'bt-signature': signature, 'bt-signature-version': SIGNATURE_VERSION, 'user-agent': 'Tessera-Webhooks' }
        },
        this.allow
      )
    }
    const finished = clock.now()
    const attempts = delivery.attempts + 1
    const entry: DeliveryAttemptRecord = { at: started, outcome: result.outcome, duration_ms: Math.round(performance.now() - startedTick) }
    if ('statusCode' in result && result.statusCode !== undefined) entry.status_code = result.statusCode
    if (result.error) entry.error = result.error
    const final = result.outcome !== 'failed' || !webhook || attempts >= this.settings.maxAttempts
    const status = result.outcome === 'failed' ? (final ? 'failed' : 'pending') : result.outcome
    await writes.run((trx) =>
      recordDeliveryAttempt(trx, delivery.id, {
        status,
        attempts,
        attempt_log: [...delivery.attempt_log, entry],
        next_attempt_at: final ? finished : finished + webhookRetryDelayMs(attempts, this.settings.retryBaseMs),
        completed_at: final ? finished : null
      })
    )
    const log = { deliveryId: delivery.id, webhookId: delivery.webhook_id, attempts, outcome: result.outcome, code: result.error }
    if (result.outcome === 'delivered') logger.info(log, 'webhook event delivered')
    else logger.warn(log, status === 'pending' ? 'webhook delivery failed; will retry' : `webhook delivery ${status}`)
    return result.outcome === 'delivered'
  }
}
