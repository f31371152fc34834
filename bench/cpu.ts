/**
 * `npm run bench:cpu`: server CPU time per request, a figure a busy machine
 * does not distort the way it distorts throughput (issues 9 and 11).
 *
 * The service (`tessera serve`) and the bare Koa ceiling (bench/bare-koa.ts) run
 * as children pinned to core 0; this script, which drives them with autocannon,
 * re-executes itself pinned to core 1 (with two cores or more). For each
 * measurement it sends a fixed number of requests and divides the CPU time the
 * server spent meanwhile (every thread, SQLite's included) by the requests
 * completed. In each round the servers are measured back to back, starting
 * with another one each round; ratios are taken within a round (a busy
 * neighbour moves both sides of one) and their median over the rounds printed.
 *
 *   npm run bench:cpu -- [--rounds 7] [--requests 5000] [--connections 32] [--compare <checkout>] [--engine postgres]
 *
 * `--engine postgres` serves each service from a fresh PostgreSQL database
 * (bench/postgres.ts; created and dropped by the run), pins PostgreSQL to the
 * server core too, and counts in each service's CPU time that of the
 * PostgreSQL backends connected to its database, which do part of its work.
 *
 * Durable Koa (bench/durable-koa.ts) is measured with bare Koa: the same routes, each
 * request also committing the rows an audited request must, on the run's engine (on
 * PostgreSQL, its backend's CPU counted with it).
 *
 * `--compare <dir>` also starts the service of a second checkout (its own
 * `bin/tessera.cjs`, its own vault) and measures it alternately with this one (A/B).
 *
 * `--bulk` adds the bulk figures of `npm run bench`, per token: (b) `POST /tokenize`
 * with 1,000 plain values and (d) with 100 cards per request (4 connections),
 * against the raw seal+insert ceiling (bench/raw-insert.ts, a child on the server
 * core, its table filled to the service's size first), whose process CPU (and its
 * backend's, on PostgreSQL) is measured the same way around a fixed token count.
 * `--bulk-only` measures those alone.
 */
import autocannon from 'autocannon'
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import knex from 'knex'
import { benchOptions, engineOption, positiveInteger } from './options'
import { benchDatabase, pinPostgres } from './postgres'
import { RawInsertChild, type RawKind } from './raw-insert'
import { cardRequest, distinctBodies, plainValue, TOKENIZE_CARDS, TOKENIZE_VALUES } from './tokenize-bodies'

const ROOT = resolve(__dirname, '..')
const PINNED_ENV = 'TESSERA_BENCH_CPU_PINNED'
const SERVER_CORE = '0'
const CLIENT_CORE = '1'
const CARDS = 50
/** Connections of the bulk figures, as in `npm run bench`. */
const BULK_CONNECTIONS = 4
/** Rows per transaction of the raw ceiling: its measurements are whole transactions. */
const RAW_BATCH = 1000

const USAGE = `npm run bench:cpu -- [options]

  --rounds N          rounds; each ratio is the median over them (default 7)
  --requests N        requests per measurement of a create or a read (default 5000)
  --connections N     connections of the creates and reads (default 32)
  --compare DIR       also measure the service of another checkout, alternately (A/B)
  --engine ENGINE     sqlite (default) or postgres
  --bulk              add CPU per token of POST /tokenize against the raw seal+insert ceiling
  --bulk-only         only those
  --bulk-tokens N     tokens per bulk measurement, in whole thousands (default 20000)
  -h, --help          this text`

const args = benchOptions(USAGE, {
  rounds: { type: 'string', default: '7' },
  requests: { type: 'string', default: '5000' },
  connections: { type: 'string', default: '32' },
  compare: { type: 'string' },
  engine: { type: 'string', default: 'sqlite' },
  bulk: { type: 'boolean', default: false },
  'bulk-only': { type: 'boolean', default: false },
  'bulk-tokens': { type: 'string', default: '20000' }
})
const ON_POSTGRES = engineOption(USAGE, args.engine) === 'postgres'
const ROUNDS = positiveInteger(USAGE, 'rounds', args.rounds)
const REQUESTS = positiveInteger(USAGE, 'requests', args.requests)
const CONNECTIONS = positiveInteger(USAGE, 'connections', args.connections)
const BULK = args.bulk || args['bulk-only']
const SINGLE = !args['bulk-only']
/** Tokens per bulk measurement, in whole raw transactions. */
const BULK_TOKENS = Math.max(RAW_BATCH, Math.round(positiveInteger(USAGE, 'bulk-tokens', args['bulk-tokens']) / RAW_BATCH) * RAW_BATCH)
// Once pinned, availableParallelism() counts only the client core: the re-executed script inherits the decision.
const canPin = process.env[PINNED_ENV] === '1' || (availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0)
const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim())

/**
 * Server CPU time so far, in microseconds: the on-CPU nanoseconds of each of its threads
 * (/proc/<pid>/task/<tid>/schedstat), which Node keeps for its whole life (the event
 * loop, libuv's pool where SQLite works, V8's helpers); utime+stime of /proc/<pid>/stat
 * counts the same but only in clock ticks (10 ms), so it is the fallback.
 */
function cpuMicros(pid: number): number {
  try {
    let nanoseconds = 0
    for (const tid of readdirSync(`/proc/${pid}/task`)) nanoseconds += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    return nanoseconds / 1000
  } catch {
    if (!existsSync(`/proc/${pid}`)) return 0 // a backend that has ended
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[11]) + Number(fields[12]) // utime, stime (fields 14 and 15)
    return (ticks * 1e6) / CLOCK_TICKS_PER_SECOND
  }
}

interface Server {
  name: string
  child: ChildProcess
  url: string
  /** The PostgreSQL backends serving it (their pids), when it serves a team vault. */
  backends?: () => Promise<number[]>
}

/** CPU time so far of a server and of the PostgreSQL backends serving it (the same backends before and after: its pools keep them). */
function serverCpuMicros(pid: number, backends: readonly number[]): number {
  return cpuMicros(pid) + backends.reduce((sum, backend) => sum + cpuMicros(backend), 0)
}

/** The pids of the backends connected to the database of `url`, read through a connection of its own (not counted). */
function backendsOf(url: string): () => Promise<number[]> {
  const name = new URL(url).pathname.slice(1)
  return async () => {
    const db = knex({ client: 'pg', connection: url, pool: { min: 0, max: 1 } })
    try {
      const { rows } = (await db.raw('SELECT pid FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()', [name])) as { rows: { pid: number }[] }
      return rows.map((row) => row.pid)
    } finally {
      await db.destroy()
    }
  }
}

/** Starts `node <args>` in `cwd`, pinned to the server core, and waits for its "listening on" line. */
function startServer(name: string, cwd: string, args: string[]): Promise<Server> {
  const command = canPin ? ['taskset', '-c', SERVER_CORE, process.execPath, ...args] : [process.execPath, ...args]
  // taskset execs the command: the child's pid is the server's.
  const child = spawn(command[0], command.slice(1), { cwd, env: { ...process.env, TESSERA_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolvePromise, reject) => {
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) resolvePromise({ name, child, url: match[1] })
    })
    child.once('exit', (code) => reject(new Error(`${name}: ${args.join(' ')} exited with ${code}`)))
  })
}

function stopServer({ child }: Server): Promise<void> {
  return new Promise((resolvePromise) => {
    child.removeAllListeners('exit')
    if (child.exitCode !== null) return resolvePromise()
    child.once('exit', () => resolvePromise())
    child.kill('SIGTERM')
  })
}

function runCli(cwd: string, args: string[]): string {
  const result = spawnSync(process.execPath, ['bin/tessera.cjs', ...args], { cwd, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`tessera ${args[0]} in ${cwd} exited with ${result.status}: ${result.stderr}`)
  return result.stdout
}

async function api<T>(url: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

/** A workload: what autocannon sends to one server. */
type Workload = Pick<autocannon.Options, 'url' | 'method' | 'headers' | 'body' | 'requests'>

/** A bulk workload: `POST /tokenize` bodies of `elements` new tokens each. */
interface BulkWorkload {
  workload: Workload
  elements: number
}

interface Target {
  label: string
  server: Server
  create: Workload
  get: Workload
  /** The bulk figures' bodies (services only). */
  bulk?: Record<RawKind, BulkWorkload>
  /** Its token count, to fill the raw ceiling's table to (services only). */
  tokens?: () => Promise<number>
}

/** The figures measured per round, each in µs per request (create, get) or per token (plain, card). */
type FigureKind = 'create' | 'get' | 'plain' | 'card'
type Samples = Record<FigureKind, number[]>

const CREATE_BODY = JSON.stringify({ type: 'token', data: 'x'.repeat(100) })

/** Starts a checkout's service on a fresh vault, with a private application and the cards GET reads. */
async function startService(label: string, checkout: string, dir: string, databaseUrl?: string): Promise<Target> {
  const dataDir = join(dir, label)
  const vault = ['--data-dir', dataDir, ...(databaseUrl ? ['--database-url', databaseUrl] : [])]
  const init = JSON.parse(runCli(checkout, ['init', ...vault, '--json'])) as { application: { key: string } }
  const server = await startServer(label, checkout, ['bin/tessera.cjs', 'serve', ...vault, '--port', '0'])
  if (databaseUrl) server.backends = backendsOf(databaseUrl)
  const app = await api<{ key: string }>(server.url, init.application.key, 'POST', '/applications', { name: 'bench', type: 'private', permissions: ['token:create', 'token:read'] })
  const headers = { 'svc-api-key': app.key, 'content-type': 'application/json' }
  const card = { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 } }
  const cards = await Promise.all(Array.from({ length: CARDS }, () => api<{ id: string }>(server.url, app.key, 'POST', '/tokens', card)))
  const tokenize = (elements: number, element: (n: number) => unknown): BulkWorkload => ({
    workload: { url: server.url + '/tokenize', headers, requests: [distinctBodies(elements, element)] },
    elements
  })
  return {
    label,
    server,
    create: { url: server.url + '/tokens', method: 'POST', headers, body: CREATE_BODY },
    get: { url: server.url, headers, requests: cards.map(({ id }) => ({ method: 'GET', path: `/tokens/${id}` })) },
    bulk: { plain: tokenize(TOKENIZE_VALUES, plainValue), card: tokenize(TOKENIZE_CARDS, cardRequest) },
    tokens: async () => (await api<{ pagination: { total_items: number } }>(server.url, app.key, 'GET', '/tokens?size=1')).pagination.total_items
  }
}

/** Bare Koa (bench/bare-koa.ts), or durable Koa (bench/durable-koa.ts): the ceilings' app (bench/koa-ceiling.ts), the second also committing what an audited request must. */
async function startKoa(label: 'bare Koa' | 'durable Koa', script: string, databaseUrl?: string): Promise<Target> {
  const server = await startServer(label, ROOT, ['bin/run-ts.cjs', script, ...(databaseUrl ? [databaseUrl] : [])])
  if (databaseUrl) server.backends = backendsOf(databaseUrl)
  return {
    label,
    server,
    create: { url: server.url + '/tokens', method: 'POST', headers: { 'content-type': 'application/json' }, body: CREATE_BODY },
    get: { url: server.url + '/tokens/bench' }
  }
}

/** Server CPU µs per completed request over `amount` requests of `workload`. */
async function measure(server: Server, workload: Workload, amount = REQUESTS, connections = CONNECTIONS): Promise<number> {
  const backends = (await server.backends?.()) ?? []
  const before = serverCpuMicros(server.child.pid!, backends)
  const result = await autocannon({ connections, amount, ...workload })
  const spent = serverCpuMicros(server.child.pid!, backends) - before
  const failed = result.errors + result.non2xx
  if (failed > 0) throw new Error(`${server.name}: ${failed} failed or non-2xx responses`)
  return spent / result.requests.total
}

/** A service's CPU µs per token over `tokens` tokens of bulk tokenize bodies. */
async function measureBulk(server: Server, { workload, elements }: BulkWorkload, tokens = BULK_TOKENS): Promise<number> {
  // At least one request per connection: autocannon refuses fewer.
  return (await measure(server, workload, Math.max(BULK_CONNECTIONS, Math.ceil(tokens / elements)), BULK_CONNECTIONS)) / elements
}

/** The raw seal+insert ceiling as a child on the server core, with its own database (and backend, on PostgreSQL). */
interface RawCeiling {
  label: string
  child: RawInsertChild
  backends?: () => Promise<number[]>
}

/** The raw ceiling's CPU µs per token of `kind`, its table first filled (untimed) to `tableSize` tokens. */
async function measureRaw(raw: RawCeiling, kind: RawKind, tableSize: number, tokens = BULK_TOKENS): Promise<number> {
  await raw.child.fillTo(tableSize)
  const backends = (await raw.backends?.()) ?? []
  const before = serverCpuMicros(raw.child.pid, backends)
  await raw.child.measure(tokens / RAW_BATCH, kind)
  return (serverCpuMicros(raw.child.pid, backends) - before) / tokens
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const format = (value: number, digits = 1) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-bench-cpu-'))
  const servers: Server[] = []
  const databases: { url: string; drop(): Promise<void> }[] = []
  const database = async (purpose: string) => {
    if (!ON_POSTGRES) return undefined
    const created = await benchDatabase(purpose)
    databases.push(created)
    return created.url
  }
  const postgres = ON_POSTGRES ? pinPostgres(canPin) : undefined
  let raw: RawCeiling | undefined
  try {
    const bare = await startKoa('bare Koa', 'bench/bare-koa.ts')
    servers.push(bare.server)
    const targets = [bare]
    const durable = SINGLE ? await startKoa('durable Koa', 'bench/durable-koa.ts', await database('cpu_durable')) : undefined
    if (durable) {
      servers.push(durable.server)
      targets.push(durable)
    }
    const service = await startService('tessera', ROOT, dir, await database('cpu'))
    servers.push(service.server)
    targets.push(service)
    if (args.compare) {
      const other = await startService(`compare (${args.compare})`, resolve(args.compare), dir, await database('cpu_compare'))
      servers.push(other.server)
      targets.push(other)
    }
    if (BULK) {
      const rawUrl = await database('cpu_raw')
      const child = await RawInsertChild.start(rawUrl ?? join(dir, 'raw.db'))
      raw = { label: ON_POSTGRES ? 'raw seal+insert with pg' : 'raw seal+insert', child, backends: rawUrl ? backendsOf(rawUrl) : undefined }
    }
    const kinds = SINGLE ? (['create', 'get'] as const) : []
    const bulkKinds: RawKind[] = BULK ? ['plain', 'card'] : []
    const services = targets.filter((target) => target.bulk)
    // The raw table follows the service's size (the services grow alike: the same bodies each round).
    const rawPerToken = async (kind: RawKind) => measureRaw(raw!, kind, await service.tokens!())
    // Warm-up: JIT, caches, WAL.
    for (const target of targets) for (const kind of kinds) await measure(target.server, target[kind], Math.min(REQUESTS, 5000))
    for (const kind of bulkKinds) {
      for (const target of services) await measureBulk(target.server, target.bulk![kind], Math.min(BULK_TOKENS, 5000))
      await rawPerToken(kind)
    }

    const labels = [...targets.map((target) => target.label), ...(raw ? [raw.label] : [])]
    const samples = new Map(labels.map((label): [string, Samples] => [label, { create: [], get: [], plain: [], card: [] }]))
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(`round ${round}/${ROUNDS}\n`)
      // Each round starts with another server, so none is always measured first (or right after a given one);
      // the servers of one kind are measured back to back, so a round's ratios compare like with like.
      const order = targets.map((_, index) => targets[(index + round) % targets.length])
      for (const kind of kinds) for (const target of order) samples.get(target.label)![kind].push(await measure(target.server, target[kind]))
      // The raw ceiling takes its turn among the services, at another place each round.
      const bulkOrder = [...services, undefined].map((_, index, all) => all[(index + round) % all.length])
      for (const kind of bulkKinds) {
        for (const target of bulkOrder) {
          if (target) samples.get(target.label)![kind].push(await measureBulk(target.server, target.bulk![kind]))
          else samples.get(raw!.label)![kind].push(await rawPerToken(kind))
        }
      }
    }
    if (SINGLE) report(targets, services, samples)
    if (raw) reportBulk(services, raw, samples)
  } finally {
    await raw?.child.close()
    await Promise.all(servers.map(stopServer))
    await Promise.all(databases.map((created) => created.drop()))
    postgres?.release()
    await rm(dir, { recursive: true, force: true })
  }
}

const PINNING = canPin ? `server on core ${SERVER_CORE}, load on core ${CLIENT_CORE}` : 'not pinned (fewer than 2 cores or no taskset)'
const ENGINE = ON_POSTGRES ? 'team vault on PostgreSQL (service + its backends)' : 'SQLite'

/** Per-round ratio of `numerator` to `denominator`, as the median and the range over rounds. */
function ratio(numerator: number[], denominator: number[]): string {
  const ratios = numerator.map((value, round) => (100 * value) / denominator[round])
  return `${format(median(ratios))}% (${format(Math.min(...ratios), 0)}–${format(Math.max(...ratios), 0)})`
}

function report(targets: Target[], services: Target[], samples: Map<string, Samples>): void {
  console.log(`\nServer CPU µs per request, ${ENGINE} — ${ROUNDS} rounds, ${REQUESTS} requests each, ${CONNECTIONS} connections, ${PINNING}, Node ${process.version}`)
  console.log('µs: median of the rounds; ratios: median of the per-round ratios (servers measured back to back, so a busy machine moves both sides)\n')
  const bare = samples.get('bare Koa')!
  const durable = samples.get('durable Koa')
  const [service, compared] = services.map((target) => samples.get(target.label)!)
  console.log(['server', 'POST /tokens µs', 'bare/POST', 'GET /tokens/{id} µs', 'bare/GET', 'rounds (POST; GET)'].join(' | '))
  for (const target of targets) {
    const { create, get } = samples.get(target.label)!
    const rounds = `${create.map((v) => format(v, 0)).join(' ')}; ${get.map((v) => format(v, 0)).join(' ')}`
    console.log([target.label, format(median(create)), ratio(bare.create, create), format(median(get)), ratio(bare.get, get), rounds].join(' | '))
  }
  if (durable) {
    console.log(`\nDurable Koa (bare Koa committing what an audited request must) as a share of this checkout's service: POST ${ratio(durable.create, service.create)}, GET ${ratio(durable.get, service.get)}`)
  }
  if (compared) {
    console.log(`\nA/B: this checkout's CPU per request as a share of ${services[1].label}'s: POST ${ratio(service.create, compared.create)}, GET ${ratio(service.get, compared.get)}`)
  }
}

/** The bulk figures: CPU µs per token of each service and of the raw ceiling, and raw/service per round. */
function reportBulk(services: Target[], raw: RawCeiling, samples: Map<string, Samples>): void {
  const plainLabel = `(b) ${format(TOKENIZE_VALUES, 0)} plain values`
  const cardLabel = `(d) ${TOKENIZE_CARDS} cards`
  console.log(`\nCPU µs per token of POST /tokenize, ${ENGINE} — ${ROUNDS} rounds, ${format(BULK_TOKENS, 0)} tokens each, ${BULK_CONNECTIONS} connections, ${PINNING}`)
  console.log(`ceiling: ${raw.label} (${ON_POSTGRES ? 'its process and its backend' : 'its process'}), its table filled to the service's size before each measurement\n`)
  const ceiling = samples.get(raw.label)!
  console.log(['server', `${plainLabel} µs`, 'raw/service', `${cardLabel} µs`, 'raw/service', 'rounds (plain; cards)'].join(' | '))
  for (const label of [raw.label, ...services.map((target) => target.label)]) {
    const { plain, card } = samples.get(label)!
    const rounds = `${plain.map((v) => format(v, 1)).join(' ')}; ${card.map((v) => format(v, 1)).join(' ')}`
    const ratios = label === raw.label ? ['', ''] : [ratio(ceiling.plain, plain), ratio(ceiling.card, card)]
    console.log([label, format(median(plain)), ratios[0], format(median(card)), ratios[1], rounds].join(' | '))
  }
  if (services.length > 1) {
    const [service, compared] = services.map((target) => samples.get(target.label)!)
    console.log(`\nA/B: this checkout's CPU per token as a share of ${services[1].label}'s: ${plainLabel} ${ratio(service.plain, compared.plain)}, ${cardLabel} ${ratio(service.card, compared.card)}`)
  }
}

/** Runs the rest of this script pinned to the client core, once. */
function pinSelf(): boolean {
  if (!canPin || process.env[PINNED_ENV]) return false
  const result = spawnSync('taskset', ['-c', CLIENT_CORE, process.execPath, join(ROOT, 'bin/run-ts.cjs'), ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, [PINNED_ENV]: '1' } })
  process.exit(result.status ?? 1)
}

if (!pinSelf()) {
  main().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
