/**
 * `npm run bench -- --scale` (or BENCH_SCALE=1): the lists of a large vault.
 *
 * A vault of BENCH_SCALE_TOKENS tokens (default 1,000,000; metadata
 * `group: g<n % 1000>`) and BENCH_SCALE_LOGS audit entries (default
 * 10,000,000, the tokens' create entries included) is seeded once by
 * bench/scale-seed.ts and cached in bench/.cache, keyed by size, schema
 * (the migrations) and the seeder's version. Each run works on a copy of it: `tessera serve`
 * restarted on the copy, on the server's core, and measured from here with
 * BENCH_SCALE_CONNECTIONS (default 4) connections for BENCH_SECONDS each —
 * a filtered token page, the log's first page, an entity's entries and a
 * day's entries; then the server's RSS, the bytes per token and per entry
 * (SQLite's `dbstat`), and the GUI's page loads (bench/scale-gui.ts,
 * BENCH_GUI_LOADS timed loads, default 5; 0 skips them). BENCH_SCALE_ONLY=gui
 * measures the GUI alone (no lists, disk or memory figures).
 */
import autocannon from 'autocannon'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import sqlite3 from 'sqlite3'
import { api, format, median, pinLoadGenerator, ROOT, residentBytes, startServer, stopChild } from './children'
import type { GuiTimes } from './scale-gui'
import { GROUPS, SEED_VERSION, type SeedResult } from './scale-seed'

const TOKENS = Number(process.env.BENCH_SCALE_TOKENS ?? 1_000_000)
const LOG_ENTRIES = Number(process.env.BENCH_SCALE_LOGS ?? 10_000_000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_SCALE_CONNECTIONS ?? 4)
const GUI_LOADS = Number(process.env.BENCH_GUI_LOADS ?? 5)
const GUI_ONLY = process.env.BENCH_SCALE_ONLY === 'gui'
const CACHE = join(ROOT, 'bench', '.cache')
const DAY = 86_400_000
const FILTER_GROUP = 'g7'

interface ListFigure {
  label: string
  /** The first request, alone. */
  firstMs: number
  /** Requests completed under load. */
  requests: number
  requestsPerSecond: number
  p50: number
  p99: number
  errors: number
  /** Responses by status, and `errors` (connection errors and timeouts) when there were any. */
  statuses: Record<string, number>
}

/** Bytes of the pages of the tables behind tokens, and behind the audit log (indexes included). */
interface Footprint {
  fileBytes: number
  tokenBytes: number
  logBytes: number
}

/**
 * Which tables a token's and a log entry's bytes are counted in: by name, so
 * a table added for them (an index table, counters) is counted too.
 */
const TOKEN_TABLES = /^tokens?(_|$)/
const LOG_TABLES = /^logs?(_|$)/

/** The cache key: what the seeded vault depends on (sizes, schema, the seeder's version). */
async function cacheKey(): Promise<string> {
  const migrations = join(ROOT, 'db', 'migrations')
  const hash = createHash('sha256')
  for (const file of (await readdir(migrations)).sort()) hash.update(file).update(await readFile(join(migrations, file)))
  return `scale-${TOKENS}-${LOG_ENTRIES}-v${SEED_VERSION}-${hash.digest('hex').slice(0, 12)}`
}

/** Runs `node <args>` to completion (progress passes through on stderr); resolves with its last stdout line. */
function runNode(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.once('exit', (code) => (code === 0 ? resolve(stdout.trim().split('\n').at(-1)!) : reject(new Error(`${args.join(' ')} exited with ${code}`))))
  })
}

/** The cached seeded vault of this size and schema, seeding it first when there is none. */
async function seededVault(): Promise<{ dataDir: string; seed: SeedResult; seeded: boolean }> {
  const dir = join(CACHE, await cacheKey())
  const seedFile = join(dir, 'seed.json')
  if (existsSync(seedFile)) return { dataDir: join(dir, 'vault'), seed: JSON.parse(await readFile(seedFile, 'utf8')) as SeedResult, seeded: false }
  await mkdir(CACHE, { recursive: true })
  const partial = await mkdtemp(join(CACHE, 'seeding-'))
  try {
    process.stderr.write(`seeding ${format(TOKENS)} tokens and ${format(LOG_ENTRIES)} log entries into ${dir} (once; later runs reuse it)\n`)
    const seed = JSON.parse(await runNode(['bin/run-ts.cjs', 'bench/scale-seed.ts', join(partial, 'vault'), String(TOKENS), String(LOG_ENTRIES)])) as SeedResult
    await writeFile(join(partial, 'seed.json'), JSON.stringify(seed, null, 2))
    await rename(partial, dir)
    return { dataDir: join(dir, 'vault'), seed, seeded: true }
  } catch (error) {
    await rm(partial, { recursive: true, force: true })
    throw error
  }
}

function all<T>(db: sqlite3.Database, query: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(query, (error, rows) => (error ? reject(error) : resolve(rows as T[]))))
}

/** Page bytes per table (its indexes included), through SQLite's `dbstat` table, of a closed (checkpointed) vault. */
async function footprint(dataDir: string): Promise<Footprint> {
  const file = join(dataDir, 'tessera.db')
  const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY)
  try {
    const rows = await all<{ table: string; bytes: number }>(
      db,
      'SELECT s.tbl_name AS "table", sum(d.pgsize) AS bytes FROM dbstat d JOIN sqlite_schema s ON s.name = d.name GROUP BY s.tbl_name'
    )
    const sum = (tables: RegExp) => rows.filter((row) => tables.test(row.table)).reduce((total, row) => total + row.bytes, 0)
    const wal = existsSync(`${file}-wal`) ? (await stat(`${file}-wal`)).size : 0
    return { fileBytes: (await stat(file)).size + wal, tokenBytes: sum(TOKEN_TABLES), logBytes: sum(LOG_TABLES) }
  } finally {
    await new Promise((resolve) => db.close(resolve))
  }
}

/** A list slower than this is measured by a fixed number of requests (SLOW_ROUNDS per connection) instead of for BENCH_SECONDS. */
const SLOW_LIST_MS = 1000
const SLOW_ROUNDS = 4

/**
 * One request alone first (a warm-up, and the one figure a very slow list
 * still gives), then the list under CONNECTIONS connections: for SECONDS, or,
 * when it is slow, for a fixed number of requests so that each one completes.
 */
async function measureList(url: string, key: string, label: string, path: string): Promise<ListFigure> {
  const headers = { 'svc-api-key': key }
  const started = performance.now()
  const first = await fetch(url + path, { headers })
  await first.arrayBuffer()
  const firstMs = performance.now() - started
  const slow = firstMs > SLOW_LIST_MS
  const timeout = Math.max(10, Math.ceil((CONNECTIONS * firstMs * 4) / 1000))
  const result = await autocannon({ url: url + path, headers, connections: CONNECTIONS, timeout, ...(slow ? { amount: CONNECTIONS * SLOW_ROUNDS } : { duration: SECONDS }) })
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([status, stats]) => [status, stats.count ?? 0]))
  if (first.status !== 200) statuses[`first ${first.status}`] = 1
  if (result.errors > 0) statuses.errors = result.errors
  return {
    label,
    firstMs,
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + (first.status === 200 ? 0 : 1),
    statuses
  }
}

/** The day in the middle of the seeded history, as start_date and end_date. */
function middleDay(seed: SeedResult): string {
  const start = Math.floor((seed.firstEntryAt + seed.lastEntryAt) / 2 / DAY) * DAY
  return `start_date=${new Date(start).toISOString()}&end_date=${new Date(start + DAY).toISOString()}`
}

async function measureService(dataDir: string, seed: SeedResult): Promise<{ lists: ListFigure[]; rss?: number; startSeconds: number }> {
  const started = performance.now()
  const service = await startServer(['bin/tessera.cjs', 'serve', '--data-dir', dataDir, '--port', '0'])
  const startSeconds = (performance.now() - started) / 1000
  try {
    // Token reads need token:read, which the management application does not hold.
    const tokenReader = await api<{ key: string }>(service.url, seed.managementKey, 'POST', '/applications', { name: 'scale bench', type: 'private', permissions: ['token:read'] })
    const measure = (label: string, path: string, key = seed.managementKey) => measureList(service.url, key, label, path)
    const lists = [
      await measure(`GET /tokens?size=100&metadata.group=${FILTER_GROUP}`, `/tokens?size=100&metadata.group=${FILTER_GROUP}`, tokenReader.key),
      await measure('GET /logs?size=100', '/logs?size=100'),
      await measure(`GET /logs?size=100, entity filter (${format(seed.hotTokenEntries)} entries)`, `/logs?size=100&entity_type=token&entity_id=${seed.hotTokenId}`),
      await measure('GET /logs?size=100, entity filter (a token read a few times)', `/logs?size=100&entity_type=token&entity_id=${seed.coldTokenId}`),
      await measure('GET /logs?size=100, one day (start_date, end_date)', `/logs?size=100&${middleDay(seed)}`)
    ]
    return { lists, rss: residentBytes(service.child.pid!), startSeconds }
  } finally {
    await stopChild(service.child)
  }
}

async function measureGui(dataDir: string, pinned: boolean): Promise<GuiTimes> {
  const expected = Math.ceil(TOKENS / GROUPS)
  const line = await runNode(['bin/run-ts.cjs', 'bench/scale-gui.ts', dataDir, String(GUI_LOADS), FILTER_GROUP, String(expected)], {
    ...process.env,
    BENCH_GUI_PIN: pinned ? '1' : '0'
  })
  return JSON.parse(line) as GuiTimes
}

export async function runScaleBench(): Promise<void> {
  // Seeded before pinning: the seeder may use every core.
  const { dataDir: cached, seed, seeded } = await seededVault()
  const pinning = pinLoadGenerator()
  console.log(pinning.summary)
  const work = await mkdtemp(join(CACHE, 'run-'))
  try {
    const dataDir = join(work, 'vault')
    await cp(cached, dataDir, { recursive: true }) // the runs write (reads are audited): the cache stays as seeded
    if (GUI_ONLY) console.log(`\nTessera at scale — ${format(seed.tokens)} tokens, ${format(seed.logEntries)} log entries; the GUI alone (BENCH_SCALE_ONLY=gui); ${pinning.summary}`)
    else reportService(seed, seeded, await footprint(dataDir), await measureService(dataDir, seed), pinning.summary)
    if (GUI_LOADS > 0) {
      process.stderr.write('GUI page loads\n')
      reportGui(await measureGui(dataDir, pinning.pinned))
    }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

function reportService(seed: SeedResult, seeded: boolean, bytes: Footprint, service: Awaited<ReturnType<typeof measureService>>, pinning: string): void {
  const mib = (value: number) => `${format(value / 1024 / 1024)} MiB`
  console.log(`\nTessera at scale — ${format(seed.tokens)} tokens, ${format(seed.logEntries)} log entries; ${CONNECTIONS} connections, ${SECONDS}s per list; Node ${process.version}; ${pinning}`)
  console.log(seeded ? `Seeded in ${format(seed.seconds)} s (cached in bench/.cache for later runs).` : `Seeded vault from bench/.cache (seeding took ${format(seed.seconds)} s).`)
  console.log(`Service start on the vault: ${format(service.startSeconds, 1)} s.\n`)
  console.log(['list (100 rows)', 'alone', `req/s (${CONNECTIONS} connections)`, 'p50', 'p99', 'requests', 'target'].join(' | '))
  for (const list of service.lists) {
    console.log([list.label, `${format(list.firstMs)} ms`, format(list.requestsPerSecond, 1), `${list.p50} ms`, `${list.p99} ms`, format(list.requests), 'p50 ≤ 20 ms, p99 ≤ 50 ms'].join(' | '))
  }
  for (const list of service.lists.filter((list) => list.errors > 0)) {
    console.log(`WARNING: ${list.label}: ${format(list.errors)} failed or non-2xx responses (${JSON.stringify(list.statuses)})`)
  }
  const perToken = bytes.tokenBytes / seed.tokens
  const perEntry = bytes.logBytes / seed.logEntries
  console.log(`\nDisk: ${mib(bytes.fileBytes)} (database and WAL); tokens ${format(perToken)} bytes each, log entries ${format(perEntry)} bytes each (dbstat pages of their tables and indexes)`)
  console.log(`Bytes per token with its create entry: ${format(perToken + perEntry)} (target ≤ 700)`)
  console.log(`RSS of the server after the lists: ${service.rss === undefined ? 'unknown (no /proc)' : mib(service.rss)} (target ≤ 300 MiB)`)
}

function reportGui(gui: GuiTimes): void {
  console.log(`\nGUI (headless Chromium, p50 of ${gui.tokensPage.length} loads; target ≤ 100 ms):`)
  console.log(`- tokens view opened in a new page (the app's start included), first rows shown: ${format(median(gui.tokensPage))} ms`)
  console.log(`- tokens view reached from the sidebar of the open app, first rows drawn (timed in the page): ${format(median(gui.tokensFromSidebar))} ms`)
  console.log(`- tokens filtered by metadata.group=${FILTER_GROUP}, Search clicked until the rows and their count are drawn (timed in the page): ${format(median(gui.tokensFiltered))} ms`)
  console.log(`- audit log view opened, first entries shown: ${format(median(gui.logsPage))} ms`)
  console.log(`- audit log view reached from the sidebar of the open app, the entries it read drawn (timed in the page): ${format(median(gui.logsFromSidebar))} ms`)
  console.log(`- audit log view reached again from the sidebar after another view, the entries it read drawn (timed in the page): ${format(median(gui.logsReturn))} ms`)
  console.log(`The same two switches in one window after it has made a few of each, as a window in use does (p50 of ${gui.settledLogsReturn.length}):`)
  console.log(`- tokens view reached from the sidebar: ${format(median(gui.settledTokensFromSidebar))} ms`)
  console.log(`- audit log view reached again from the sidebar: ${format(median(gui.settledLogsReturn))} ms`)
}
