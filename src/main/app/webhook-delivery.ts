/**
 * Delivers webhook events from the `webhook_deliveries` outbox: claims a due
 * delivery (one instance per attempt), signs the body with the vault's key,
 * POSTs it through the SSRF-guarded transport, and records the attempt in the
 * delivery log. Failures are retried with exponential backoff up to
 * `maxAttempts`, then the delivery is `failed`; a host that is not allowed
 * makes it `blocked` at once (nothing is sent, retrying would not help).
 *
 * Attempts run side by side, at most one per webhook at a time across all the
 * instances sharing the database (a lease on the webhook's row), so each
 * webhook's deliveries go in order, and at most `MAX_IN_FLIGHT` at once on an
 * instance: a receiver that never answers holds only its own webhook's slot,
 * never the others' deliveries.
 * Finished deliveries are deleted after `FINISHED_DELIVERY_RETENTION_MS`.
 */
import { toIsoString } from '../domain/dates'
import { deliveryBody, type WebhookEvent } from '../domain/webhook-events'
import { signBody } from '../crypto/webhook-signing'
import { parseWebhookAllowList, sendWebhook, type SendOutcome, type WebhookAllowList } from '../infra/webhook-transport'
import {
  claimDueDelivery,
  deleteFinishedDeliveries,
  findWebhook,
  hasDueDelivery,
  recordDeliveryAttempt,
  releaseWebhookLease,
  type DeliveryAttemptRecord,
  type DeliveryRecord
} from '../storage/repositories/webhooks.repository'
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
/**
 * Attempts one instance makes at once. A webhook has at most one, and a tenant at most
 * MAX_WEBHOOKS_PER_TENANT webhooks, so each webhook of a tenant always finds a slot.
 */
export const MAX_IN_FLIGHT = 16
/** How long delivered, failed and blocked deliveries stay in the delivery log: 30 days. */
export const FINISHED_DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60_000

/** Delay after failed attempt number `attempts`: base, 2×base, 4×base…, capped at an hour. */
export function webhookRetryDelayMs(attempts: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS)
}

export class WebhookDelivery {
  private readonly allow: WebhookAllowList
  private readonly settings: typeof DEFAULTS
  /** The attempt in flight of each webhook (by id). */
  private readonly inFlight = new Map<string, Promise<void>>()
  /** The claiming loop, while it runs; asked again meanwhile, it makes one more pass. */
  private dispatching: Promise<number> | undefined
  private dispatchAgain = false
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

  /** Stops claiming and waits for the attempts in flight (each ends within its time-out). */
  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    if (this.kickTimer) clearTimeout(this.kickTimer)
    await this.dispatching?.catch(() => undefined)
    await Promise.all(this.inFlight.values())
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
    if (this.closed) return
    this.deliverDue().catch((error: Error & { code?: string }) => {
      this.context.logger.error({ err: { name: error.name, code: error.code } }, 'webhook delivery run failed')
    })
  }

  /**
   * Claims due deliveries of webhooks with no attempt in flight and starts their attempts, up to
   * `MAX_IN_FLIGHT`; each attempt that ends claims again. Resolves, once they are started, with how
   * many it started (not waiting for their receivers). The `deliver-webhooks` sweep.
   */
  deliverDue(): Promise<number> {
    if (this.dispatching) {
      this.dispatchAgain = true
      return this.dispatching
    }
    const run = this.dispatchWhileAsked().finally(() => {
      this.dispatching = undefined
    })
    this.dispatching = run
    return run
  }

  private async dispatchWhileAsked(): Promise<number> {
    let started = 0
    do {
      this.dispatchAgain = false
      started += await this.startDue()
    } while (this.dispatchAgain && !this.closed)
    return started
  }

  /** One pass: claims and starts due deliveries while slots are free; how many it started. */
  private async startDue(): Promise<number> {
    const { reader, writes, clock } = this.context
    if (!(await hasDueDelivery(reader, clock.now(), this.busyWebhooks()))) return 0
    let started = 0
    while (this.inFlight.size < MAX_IN_FLIGHT && !this.closed) {
      const now = clock.now()
      const delivery = await writes.run((trx) => claimDueDelivery(trx, now, now + this.settings.timeoutMs + LEASE_MARGIN_MS, this.busyWebhooks()))
      if (!delivery) break
      this.startAttempt(delivery)
      started++
    }
    return started
  }

  private busyWebhooks(): string[] {
    return [...this.inFlight.keys()]
  }

  /** Runs the attempt in the webhook's slot; when it ends, the slot is free and due deliveries are claimed again. */
  private startAttempt(delivery: DeliveryRecord): void {
    const attempt = this.attempt(delivery)
      .catch((error: Error & { code?: string }) => {
        this.context.logger.error({ err: { name: error.name, code: error.code }, deliveryId: delivery.id }, 'webhook delivery attempt failed')
      })
      .then(() => {
        this.inFlight.delete(delivery.webhook_id)
        this.kick()
      })
    this.inFlight.set(delivery.webhook_id, attempt)
  }

  /** Deletes up to `limit` deliveries finished longer than the retention ago; how many. The `prune-webhook-deliveries` sweep. */
  pruneFinished(now: number, limit: number): Promise<number> {
    return this.context.writes.run((trx) => deleteFinishedDeliveries(trx, now - FINISHED_DELIVERY_RETENTION_MS, limit))
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
    await writes.run(async (trx) => {
      await recordDeliveryAttempt(trx, delivery.id, {
        status,
        attempts,
        attempt_log: [...delivery.attempt_log, entry],
        next_attempt_at: final ? finished : finished + webhookRetryDelayMs(attempts, this.settings.retryBaseMs),
        completed_at: final ? finished : null
      })
      await releaseWebhookLease(trx, delivery)
    })
    const log = { deliveryId: delivery.id, webhookId: delivery.webhook_id, attempts, outcome: result.outcome, code: result.error }
    if (result.outcome === 'delivered') logger.info(log, 'webhook event delivered')
    else logger.warn(log, status === 'pending' ? 'webhook delivery failed; will retry' : `webhook delivery ${status}`)
    return result.outcome === 'delivered'
  }
}
