/**
 * Background sweeps inside the service: expired tokens, token intents, idempotency keys,
 * applications and sessions are deleted, card CVCs past their retention window
 * are removed, invitation expiry is persisted, outbox mail and webhook deliveries are
 * retried, finished webhook deliveries past their retention are deleted, and audit
 * entries past their retention are archived. Each sweep's last run is stored in `job_runs`, so
 * after a restart a sweep runs at once if it is overdue, and what expired
 * while the service was down is caught up (the state itself is the data).
 *
 * Due-ness is judged by the injected clock; the timer only decides how often
 * to look. Tests move a TestClock and call `runDueJobs()` instead of sleeping.
 *
 * Instances sharing a database (a team vault) each look, but a due sweep runs on
 * one of them: the one that takes its lease in `job_runs`. Each sweep also decides
 * what to log by what its own statements changed, so even two runs that overlap
 * (a lease outlived by a slow run) never log one expiry twice.
 */
import { listJobRuns, recordJobRun, releaseJobLease, takeJobLease } from '../storage/repositories/job-runs.repository'
import type { ServiceContext } from './service-context'
import type { MailService } from './mail.service'

/** One periodic sweep. `run` handles at most `limit` items and returns how many it handled. */
export interface Sweep {
  name: string
  intervalMs: number
  /** Items per `run` call; SWEEP_BATCH unless the sweep's items are small. */
  batch?: number
  /** Routine upkeep that runs every few seconds under load: its runs are not logged. */
  quiet?: boolean
  /**
   * How many items wait (when cheap to tell): once a batch's worth waits, the sweep
   * runs at the next look rather than at its interval, so a burst is caught up in
   * seconds instead of piling up between intervals.
   */
  backlog?(): Promise<number>
  /**
   * How long this instance waits after a failed run before trying again; without it, at the next look.
   * For a sweep whose every attempt costs a lot (the archive checks the whole chain and writes a file).
   */
  retryAfterFailureMs?: number
  run(now: number, limit: number): Promise<number>
}

/** What each sweep did in one `runDueJobs()`; `error` is an error code when it failed (and will run again next time). */
export interface SweepResult {
  name: string
  processed: number
  error?: string
}

export interface JobStatus {
  name: string
  intervalMs: number
  /** Epoch ms of the last completed run, null if it never ran. */
  lastRunAt: number | null
}

/** Items per batch; a sweep repeats batches within one run up to MAX_BATCHES_PER_RUN. */
export const SWEEP_BATCH = 500
const MAX_BATCHES_PER_RUN = 20
/** How often the timer looks; each look reads `job_runs` (and the backlogs) and writes nothing unless a sweep is due. */
const DEFAULT_TICK_MS = 1_000
/**
 * How long a sweep's lease keeps other instances off it: longer than a run takes,
 * short enough that a sweep whose instance died mid-run is soon taken up by another.
 */
export const SWEEP_LEASE_MS = 5 * 60_000

/** The services whose expiry and retry work the sweeps do. */
export interface SweepTargets {
  tokens: { expireDue(now: number, limit: number): Promise<number>; expireCvcs(now: number, limit: number): Promise<number> }
  tokenIntents: { expireDue(now: number, limit: number): Promise<number> }
  idempotency: { expireDue(now: number, limit: number): Promise<number> }
  applications: { expireDue(now: number, limit: number): Promise<number> }
  sessions: { expireDue(now: number, limit: number): Promise<number> }
  invitations: { expireDue(now: number, limit: number): Promise<number> }
  mail: { kick(): void }
  webhooks: { deliverDue(): Promise<number>; pruneFinished(now: number, limit: number): Promise<number> }
  logs: { foldEntityIndex(limit: number): Promise<number>; entityIndexBacklog(): Promise<number> }
  keys: { reencrypt(limit: number): Promise<number> }
  auditArchive: { archiveExpired(now: number, limit: number): Promise<number> }
}

/**
 * The standard sweeps. Tokens are removed within a minute of `expires_at`
 * (the spec allows an hour); mail is retried every 15 s when due.
 */
export function standardSweeps(targets: SweepTargets): Sweep[] {
  return [
    { name: 'expire-tokens', intervalMs: 60_000, run: (now, limit) => targets.tokens.expireDue(now, limit) },
    // A card's CVC goes within a minute of its retention window (PCI DSS 3.3.1.2).
    { name: 'expire-cvc', intervalMs: 60_000, run: (now, limit) => targets.tokens.expireCvcs(now, limit) },
    // Token intents live 24 hours (less when they hold a CVC); each deletion is audited.
    { name: 'expire-token-intents', intervalMs: 60_000, run: (now, limit) => targets.tokenIntents.expireDue(now, limit) },
    // Idempotency keys and their stored responses live 24 hours.
    { name: 'expire-idempotency-keys', intervalMs: 60_000, run: (now, limit) => targets.idempotency.expireDue(now, limit) },
    { name: 'expire-applications', intervalMs: 60_000, run: (now, limit) => targets.applications.expireDue(now, limit) },
    { name: 'expire-sessions', intervalMs: 60_000, run: (now, limit) => targets.sessions.expireDue(now, limit) },
    { name: 'expire-invitations', intervalMs: 60_000, run: (now, limit) => targets.invitations.expireDue(now, limit) },
    // Starts delivering due mail and does not wait for the SMTP server (each send has its own deadline),
    // so a slow server holds up no other sweep; the mail service logs what it sends.
    {
      name: 'deliver-mail',
      intervalMs: 15_000,
      run: async () => {
        targets.mail.kick()
        return 0
      }
    },
    // Webhook events are delivered as they are emitted; this catches what a restart or a busy instance left behind.
    // It starts the attempts and does not wait for their receivers, so a slow receiver holds up no other sweep.
    { name: 'deliver-webhooks', intervalMs: 15_000, run: () => targets.webhooks.deliverDue() },
    // The delivery log keeps finished deliveries 30 days (FINISHED_DELIVERY_RETENTION_MS), then they go.
    { name: 'prune-webhook-deliveries', intervalMs: 3_600_000, run: (now, limit) => targets.webhooks.pruneFinished(now, limit) },
    // After a key rotation: moves sealed objects onto the new data key; resumes after a restart.
    { name: 'reencrypt-keys', intervalMs: 5_000, run: (_now, limit) => targets.keys.reencrypt(limit) },
    // Keeps the audit log's entity index close behind; entries past it are still found, by a scan of the tail
    // that grows with it, so a burst of entries is folded at the next look. Batches of 2,000 hold the writer
    // for tens of milliseconds, so the reads queued behind them barely wait.
    {
      name: 'index-logs',
      intervalMs: 5_000,
      batch: 2_000,
      quiet: true,
      backlog: () => targets.logs.entityIndexBacklog(),
      run: (_now, limit) => targets.logs.foldEntityIndex(limit)
    },
    // Audit retention: entries older than it go to an archive file (one per batch) and out of the vault.
    // A failed archive (a full disk, a folder it cannot create) is tried again after a minute, not at every look.
    { name: 'archive-logs', intervalMs: 3_600_000, batch: 100_000, retryAfterFailureMs: 60_000, run: (now, limit) => targets.auditArchive.archiveExpired(now, limit) }
  ]
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(code) ? code : ((error as Error)?.name ?? 'Error')
}

export class JobsService {
  private timer: NodeJS.Timeout | undefined
  /** Runs are serialised: a call made during a run waits, then evaluates due-ness afresh. */
  private chain: Promise<unknown> = Promise.resolve()
  private stopped = false
  /** When a sweep that failed may run again on this instance (sweeps with `retryAfterFailureMs`). */
  private readonly retryAt = new Map<string, number>()

  constructor(
    private readonly context: ServiceContext,
    private readonly sweeps: Sweep[],
    private readonly mail: Pick<MailService, 'close'>
  ) {}

  /** Starts the periodic timer (it does not keep the process alive). */
  start(tickMs = DEFAULT_TICK_MS): void {
    if (this.timer || this.stopped) return
    this.timer = setInterval(() => {
      this.runDueJobs().catch(() => undefined)
    }, tickMs)
    this.timer.unref()
  }

  /** Stops the timer, waits for a running sweep, then closes mail delivery (a send in flight gets a short grace); nothing runs afterwards. */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.chain
    await this.mail.close()
  }

  /** Runs every sweep whose interval has passed since its last run (by the injected clock). */
  runDueJobs(): Promise<SweepResult[]> {
    const run = this.chain.then(() => (this.stopped ? [] : this.runOnce()))
    this.chain = run.catch(() => undefined)
    return run
  }

  /** Each sweep with its last run, for the GUI and tests. */
  async status(): Promise<JobStatus[]> {
    const lastRuns = await this.lastRuns()
    return this.sweeps.map((sweep) => ({ name: sweep.name, intervalMs: sweep.intervalMs, lastRunAt: lastRuns.get(sweep.name) ?? null }))
  }

  private async lastRuns(): Promise<Map<string, number>> {
    const rows = await listJobRuns(this.context.reader)
    return new Map(rows.map((row) => [row.name, Number(row.last_run_at)]))
  }

  private async runOnce(): Promise<SweepResult[]> {
    const lastRuns = await this.lastRuns()
    const results: SweepResult[] = []
    for (const sweep of this.sweeps) {
      const now = this.context.clock.now()
      const last = lastRuns.get(sweep.name)
      // A clock that went backwards (last run "in the future") counts as due.
      const intervalPassed = last === undefined || now - last >= sweep.intervalMs || now < last
      if (!intervalPassed && !(await this.behind(sweep))) continue
      if (now < (this.retryAt.get(sweep.name) ?? 0)) continue
      // A sweep that is behind may run before its interval, on whichever instance takes the lease first.
      const result = await this.runLeased(sweep, now, intervalPassed ? sweep.intervalMs : 0)
      if (result?.error && sweep.retryAfterFailureMs) this.retryAt.set(sweep.name, now + sweep.retryAfterFailureMs)
      if (result) results.push(result)
    }
    return results
  }

  private async behind(sweep: Sweep): Promise<boolean> {
    return sweep.backlog !== undefined && (await sweep.backlog()) >= (sweep.batch ?? SWEEP_BATCH)
  }

  /** Runs `sweep` if this instance takes its lease (another may have run it or be running it); undefined if not. */
  private async runLeased(sweep: Sweep, now: number, intervalMs: number): Promise<SweepResult | undefined> {
    const { writes } = this.context
    const leaseUntil = now + SWEEP_LEASE_MS
    let leased: boolean
    try {
      leased = await writes.run((trx) => takeJobLease(trx, sweep.name, now, intervalMs, leaseUntil))
    } catch (error) {
      return this.failed(sweep, 0, error)
    }
    if (!leased) return undefined
    const result = await this.runSweep(sweep, now, leaseUntil)
    // A failed run gives its lease back for the next look (of any instance); if that fails too, the lease expires.
    if (result.error) await writes.run((trx) => releaseJobLease(trx, sweep.name, leaseUntil)).catch(() => undefined)
    return result
  }

  private async runSweep(sweep: Sweep, now: number, leaseUntil: number): Promise<SweepResult> {
    let processed = 0
    try {
      for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
        const batchSize = sweep.batch ?? SWEEP_BATCH
        const handled = await sweep.run(now, batchSize)
        processed += handled
        if (handled < batchSize) break
      }
      await this.context.writes.run(async (trx) => {
        await recordJobRun(trx, sweep.name, now)
        await releaseJobLease(trx, sweep.name, leaseUntil)
      })
      if (processed > 0 && !sweep.quiet) this.context.logger.info({ job: sweep.name, processed }, 'sweep done')
      return { name: sweep.name, processed }
    } catch (error) {
      return this.failed(sweep, processed, error)
    }
  }

  private failed(sweep: Sweep, processed: number, error: unknown): SweepResult {
    const code = errorCode(error)
    this.context.logger.error({ job: sweep.name, code }, 'sweep failed')
    return { name: sweep.name, processed, error: code }
  }
}
