/**
 * Seeds a vault for the scale benchmark, fast, through the service's own code
 * rather than HTTP: `tessera init`, then the vault opened in this process and
 * written through its services in big batches — real sealed tokens (bulk
 * tokenize, 1,000 per transaction) with metadata `group: g<n % 1000>`, and
 * read entries of those tokens through `audit()`, sealed into the audit chain
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
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { audit, type AuditEvent } from '../src/main/app/audit'
import { loadMasterKey } from '../src/main/bootstrap/master-key'
import { openVault } from '../src/main/bootstrap/vault'
import type { Actor } from '../src/main/domain/actor'
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

/** Tokens per tokenize call (one transaction), and metadata groups (each matches tokens / GROUPS). */
const TOKEN_BATCH = 1000
export const GROUPS = 1000
/** How far back the simulated history starts. */
const SPAN_DAYS = 180
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

export async function seedVault(dataDir: string, tokenCount: number, logCount: number): Promise<SeedResult> {
  if (logCount < tokenCount) throw new Error('every token has its create entry: ask for at least as many log entries as tokens')
  const started = performance.now()
  const init = JSON.parse(await runCli(['init', '--data-dir', dataDir, '--json', '--tenant-name', 'Scale bench'])) as { application: { id: string; key: string } }
  const masterKey = await loadMasterKey(dataDir)
  if (!masterKey) throw new Error(`no master key in ${dataDir}`)
  const end = Date.now()
  const step = (SPAN_DAYS * 86_400_000) / logCount
  const clock = new SimulatedClock(end - SPAN_DAYS * 86_400_000)
  const firstEntryAt = clock.at
  const vault = await openVault({ dataDir, masterKey, logger: silentLogger(), clock })
  try {
    for (const pragma of SEEDING_PRAGMAS) await sql(vault.db.writer).raw(pragma)
    const { tokenize, logs, context } = vault.services
    const owner = vault.owner
    const reader: Pick<Actor, 'id' | 'type' | 'tenantId'> = { id: init.application.id, type: 'application', tenantId: vault.tenantId }
    const ids: string[] = []
    const readsPerToken = (logCount - tokenCount) / tokenCount
    let entries = 0
    let sinceFold = 0
    let readsOwed = 0
    let hotEntries = 0
    let reportedAt = 0
    // The previous batch's entries commit while this batch's tokens are sealed.
    let committing: Promise<void> = Promise.resolve()
    while (ids.length < tokenCount) {
      const count = Math.min(TOKEN_BATCH, tokenCount - ids.length)
      const first = ids.length
      const requests = Array.from({ length: count }, (_, i) => ({ type: 'token', data: `value-${first + i}`, metadata: { group: `g${(first + i) % GROUPS}` } }))
      const created = (await tokenize.run(owner, requests)) as { id: string }[]
      for (const token of created) ids.push(token.id)
      clock.at += count * step
      entries += count
      readsOwed += count * readsPerToken
      const reads = Math.floor(readsOwed)
      readsOwed -= reads
      const events: AuditEvent[] = []
      for (let i = 0; i < reads; i++) {
        const id = i % HOT_SHARE === 0 ? ids[0] : ids[Math.floor(Math.random() * ids.length)]
        if (id === ids[0]) hotEntries++
        events.push({ actor: reader, entityType: 'token', entityId: id, operation: 'read', message: 'Token retrieved', at: Math.round(clock.at) })
        clock.at += step
      }
      await committing
      committing = audit(context.writes, Math.round(clock.at), events)
      entries += reads
      sinceFold += count + reads
      if (sinceFold >= FOLD_EVERY) {
        await committing
        await foldAll(logs)
        sinceFold = 0
      }
      if (entries - reportedAt >= logCount / 20) {
        progress('log entries', entries, logCount, started)
        reportedAt = entries
      }
    }
    await committing
    await foldAll(logs)
    return {
      tokens: ids.length,
      logEntries: entries,
      managementKey: init.application.key,
      hotTokenId: ids[0],
      hotTokenEntries: hotEntries + 1,
      coldTokenId: ids[Math.floor(ids.length / 2)],
      firstEntryAt,
      lastEntryAt: Math.round(clock.at),
      seconds: (performance.now() - started) / 1000
    }
  } finally {
    await vault.close()
  }
}

async function foldAll(logs: { foldEntityIndex(limit: number): Promise<number> }): Promise<void> {
  while ((await logs.foldEntityIndex(FOLD_EVERY)) > 0);
}

/** The seeder's own source: part of the cache key, so a changed seeder reseeds. */
export async function seederSource(): Promise<string> {
  return readFile(join(__dirname, 'scale-seed.ts'), 'utf8')
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
