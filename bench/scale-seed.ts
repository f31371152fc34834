/**
 * Seeds a vault for the scale benchmark, fast, through the service's own code
 * rather than HTTP: `tessera init`, then the vault opened in this process and
 * written through its services in big batches — real sealed tokens (bulk
 * tokenize, 1,000 per transaction) with metadata `group: g<n % 1000>`, and
 * read entries of those tokens through `audit()` (each with a trace id, as REST
 * requests give them), sealed into the audit chain
 * by the write queue exactly as the running service seals them. The clock is
 * simulated: the entries span SPAN_DAYS up to now, in order, so date filters
 * have something to select. The log's entity index is folded as the service's
 * sweep would have, and the vault is closed cleanly (checkpointed).
 *
 *   node bin/run-ts.cjs bench/scale-seed.ts <data dir> <tokens> <log entries>
 *
 * `log entries` counts every entry, the tokens' create entries included. It
 * prints progress on stderr and, on stdout, one JSON line: `SeedResult`.
 */
import { randomUUID } from 'node:crypto'
import { audit, type AuditActor, type AuditEvent } from '../src/main/app/audit'
import { loadMasterKey } from '../src/main/bootstrap/master-key'
import { openVault, type Vault } from '../src/main/bootstrap/vault'
import { silentLogger } from '../src/main/infra/logger'
import { sql } from '../src/main/storage/connections'
import { runCli } from './children'

/** What the benchmark needs to know about a seeded vault. */
export interface SeedResult {
  tokens: number
  logEntries: number
  /** The management application's key (a benchmark vault's, kept in the git-ignored cache). */
  managementKey: string
  /** A token read far more often than the rest: the entity filter's worst case. */
  hotTokenId: string
  /** How many entries name the hot token. */
  hotTokenEntries: number
  /** A token read about as often as any other. */
  coldTokenId: string
  /** First and last entry times (epoch ms). */
  firstEntryAt: number
  lastEntryAt: number
  seconds: number
}

/** What the seeder writes, as far as the cache of seeded vaults is concerned: bump it when that changes, so cached vaults are reseeded. */
export const SEED_VERSION = 3

/** Tokens per tokenize call (one transaction), and metadata groups (each matches tokens / GROUPS). */
const TOKEN_BATCH = 1000
export const GROUPS = 1000
/** How far back the simulated history starts. */
const SPAN_DAYS = 180
const DAY = 86_400_000
/** One read in HOT_SHARE names the hot token (the first one). */
const HOT_SHARE = 100
/** Fold the entity index after this many new entries, as the service's sweep keeps it folded. */
const FOLD_EVERY = 200_000

/**
 * Seeding needs no durability (an interrupted seed is simply redone) and
 * touches the entity index all over: no fsync per commit, a large page cache.
 */
const SEEDING_PRAGMAS = ['PRAGMA synchronous = OFF', 'PRAGMA cache_size = -524288']

/** A settable clock: the services stamp what they write with it. */
class SimulatedClock {
  constructor(public at: number) {}
  now(): number {
    return Math.round(this.at)
  }
}

function progress(label: string, done: number, total: number, started: number): void {
  const seconds = (performance.now() - started) / 1000
  process.stderr.write(`  ${label}: ${done.toLocaleString('en')} / ${total.toLocaleString('en')} (${Math.round(done / seconds).toLocaleString('en')}/s, ${seconds.toFixed(0)} s)\n`)
}

/** Writes the history: tokens and reads of them, in time order, through the open vault's services. */
class History {
  readonly ids: string[] = []
  entries = 0
  /** Entries naming the hot token (ids[0]), its create entry included. */
  hotEntries = 0
  private readsOwed = 0
  private sinceFold = 0
  /** The previous batch's entries commit while the next batch's tokens are sealed. */
  private committing: Promise<void> = Promise.resolve()

  constructor(
    private readonly vault: Vault,
    private readonly clock: SimulatedClock,
    /** Simulated time between two entries. */
    private readonly step: number,
    /** Who the read entries name: an application, as API reads do. */
    private readonly reader: AuditActor,
    private readonly readsPerToken: number
  ) {}

  /** Up to TOKEN_BATCH tokens in one bulk tokenize, then their share of reads. */
  async addBatch(count: number): Promise<void> {
    await this.createTokens(count)
    this.readsOwed += count * this.readsPerToken
    const reads = Math.floor(this.readsOwed)
    this.readsOwed -= reads
    const events = this.readEvents(reads)
    await this.committing
    this.committing = audit(this.vault.services.context.writes, this.clock.now(), events)
    this.sinceFold += count + reads
    if (this.sinceFold >= FOLD_EVERY) await this.fold()
  }

  /** Waits for the last entries and folds the entity index up to them. */
  async fold(): Promise<void> {
    await this.committing
    while ((await this.vault.services.logs.foldEntityIndex(FOLD_EVERY)) > 0);
    this.sinceFold = 0
  }

  private async createTokens(count: number): Promise<void> {
    const first = this.ids.length
    const requests = Array.from({ length: count }, (_, i) => ({ type: 'token', data: `value-${first + i}`, metadata: { group: `g${(first + i) % GROUPS}` } }))
    // Each entry carries a trace id, as every REST request's do: a generated UUID, one per request.
    const created = (await this.vault.services.tokenize.run({ ...this.vault.owner, traceId: randomUUID() }, requests)) as { id: string }[]
    for (const token of created) this.ids.push(token.id)
    if (first === 0) this.hotEntries++
    this.clock.at += count * this.step
    this.entries += count
  }

  /** Reads of random tokens so far, one in HOT_SHARE of the hot token, each a step later than the last. */
  private readEvents(count: number): AuditEvent[] {
    const events: AuditEvent[] = []
    for (let i = 0; i < count; i++) {
      const id = i % HOT_SHARE === 0 ? this.ids[0] : this.ids[Math.floor(Math.random() * this.ids.length)]
      if (id === this.ids[0]) this.hotEntries++
      events.push({ actor: this.reader, entityType: 'token', entityId: id, operation: 'read', message: 'Token retrieved', at: this.clock.now(), traceId: randomUUID() })
      this.clock.at += this.step
    }
    this.entries += count
    return events
  }
}

export async function seedVault(dataDir: string, tokenCount: number, logCount: number): Promise<SeedResult> {
  if (logCount < tokenCount) throw new Error('every token has its create entry: ask for at least as many log entries as tokens')
  const started = performance.now()
  const init = JSON.parse(await runCli(['init', '--data-dir', dataDir, '--json', '--tenant-name', 'Scale bench'])) as { application: { id: string; key: string } }
  const masterKey = await loadMasterKey(dataDir)
  if (!masterKey) throw new Error(`no master key in ${dataDir}`)
  const clock = new SimulatedClock(Date.now() - SPAN_DAYS * DAY)
  const firstEntryAt = clock.now()
  const vault = await openVault({ dataDir, masterKey, logger: silentLogger(), clock })
  try {
    for (const pragma of SEEDING_PRAGMAS) await sql(vault.db.writer).raw(pragma)
    const reader: AuditActor = { id: init.application.id, type: 'application', tenantId: vault.tenantId }
    const history = new History(vault, clock, (SPAN_DAYS * DAY) / logCount, reader, (logCount - tokenCount) / tokenCount)
    let reportedAt = 0
    while (history.ids.length < tokenCount) {
      await history.addBatch(Math.min(TOKEN_BATCH, tokenCount - history.ids.length))
      if (history.entries - reportedAt >= logCount / 20) {
        progress('log entries', history.entries, logCount, started)
        reportedAt = history.entries
      }
    }
    await history.fold()
    return {
      tokens: history.ids.length,
      logEntries: history.entries,
      managementKey: init.application.key,
      hotTokenId: history.ids[0],
      hotTokenEntries: history.hotEntries,
      coldTokenId: history.ids[Math.floor(history.ids.length / 2)],
      firstEntryAt,
      lastEntryAt: clock.now(),
      seconds: (performance.now() - started) / 1000
    }
  } finally {
    await vault.close()
  }
}

if (process.argv[1] === __filename) {
  const [dataDir, tokens, logEntries] = process.argv.slice(2)
  seedVault(dataDir, Number(tokens), Number(logEntries)).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
}
