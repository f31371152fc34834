/**
 * `npm run bench`: measures the service on 127.0.0.1 and, in the same run,
 * the ceilings it is judged against (issue 2). Figures are
 * reported as ratios to their ceiling, which makes them comparable across
 * machines. The service, the bare Koa ceiling and the raw seal+insert
 * ceiling run as child processes pinned to CPU 0; autocannon runs here,
 * pinned to CPU 1 (bench/children.ts), so client and server each own a core.
 *
 * Environment: BENCH_ROUNDS (default 3; figures are medians, ratios also
 * show their min–max), BENCH_SECONDS (per HTTP measurement, default 5),
 * BENCH_CONNECTIONS (default 32: enough concurrent requests for group commit
 * to batch), BENCH_PIN=0 (no pinning).
 *
 * Before the first round every workload runs untimed on every server (a
 * warm-up), so that each round measures optimised code and warm caches.
 *
 * Each round also measures durable Koa (bench/durable-koa.ts): bare Koa that commits,
 * on the run's engine, what an audited create or read must before answering. It has no
 * target; it shows how much of the distance to bare Koa is the durable write alone.
 *
 * After the rounds, once: the p99 latency of GET /health and GET /tokens/{id} while
 * hostile expression bodies arrive continuously (bench/hostile-expressions.ts), next to
 * the same p99 without them; then their latency while 16 callers tokenize 1,000 values
 * each, back to back.
 *
 * `npm run bench -- --scale` (or BENCH_SCALE=1) measures the lists of a large
 * vault instead (bench/scale.ts).
 *
 * `npm run bench -- --engine postgres` measures a team vault: the service and
 * the raw ceiling each on a fresh PostgreSQL database (bench/postgres.ts), with
 * PostgreSQL pinned to the server core too; after the rounds, two instances
 * on one database against one.
 */
import autocannon from 'autocannon'
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, format, median, pinLoadGenerator, runCli, startServer, stopChild } from './children'
import { hostileRequests, type HostileRequest } from './hostile-expressions'
import { benchOptions, engineOption } from './options'
import { benchDatabase, pinPostgres } from './postgres'
import { RawInsertChild } from './raw-insert'
import { runScaleBench } from './scale'
import { cardRequest, distinctBodies, plainValue, TOKENIZE_CARDS, TOKENIZE_VALUES } from './tokenize-bodies'

const USAGE = `npm run bench -- [options]

  --scale             the lists, disk and memory of a large vault, and the desktop's page loads over it
  --engine ENGINE     sqlite (default) or postgres (a team vault; BENCH_POSTGRES names the server)
  -h, --help          this text

Environment: BENCH_ROUNDS, BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_PIN=0, BENCH_SCALE=1 and
the BENCH_SCALE_* and BENCH_GUI_LOADS variables (docs/performance.md lists them all).`

const args = benchOptions(USAGE, { scale: { type: 'boolean', default: false }, engine: { type: 'string', default: 'sqlite' } })
const engine = engineOption(USAGE, args.engine)

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
/** Transactions of 1,000 rows per raw ceiling measurement. */
const RAW_TRANSACTIONS = 10
/** The untimed warm-up of each workload before the first round: seconds of load, and the raw ceiling's transactions. */
const WARM_UP_SECONDS = 2
const WARM_UP_TRANSACTIONS = 3
/** Connections sending hostile bodies back to back, and connections measuring latency (per endpoint). */
const HOSTILE_CONNECTIONS = 4
/** Callers each tokenizing TOKENIZE_VALUES plain values back to back, for the latency of their neighbours. */
const BULK_CONNECTIONS = 16
const LATENCY_CONNECTIONS = 2

interface HttpFigure {
  requestsPerSecond: number
  /** Latencies in ms. */
  p50: number
  p99: number
  max: number
  /** Failed or non-2xx requests. */
  errors: number
}

async function load(options: autocannon.Options, seconds = SECONDS): Promise<HttpFigure> {
  const { requests, latency, errors, non2xx } = await autocannon({ connections: CONNECTIONS, duration: seconds, ...options })
  return { requestsPerSecond: requests.average, p50: latency.p50, p99: latency.p99, max: latency.max, errors: errors + non2xx }
}

function hundredByteString(): string {
  return 'x'.repeat(100)
}

interface Round {
  create: HttpFigure
  tokenize: HttpFigure
  tokenizeCards: HttpFigure
  get: HttpFigure
  barePost: HttpFigure
  bareGet: HttpFigure
  /** Durable Koa's (SQLite runs only). */
  durablePost: HttpFigure
  durableGet: HttpFigure
  rawPlainPerSecond: number
  rawCardsPerSecond: number
}

interface LatencyFigures {
  health: HttpFigure
  get: HttpFigure
  /** The flood's responses by status and its requests per second, when there was one. */
  flood?: { statuses: Record<string, number>; requestsPerSecond: number }
}

/**
 * The latency of GET /health and GET /tokens/{id}, measured together on a few connections,
 * optionally while `flood` requests arrive back to back on `connections` more.
 */
async function latency(
  url: string,
  headers: Record<string, string>,
  cardIds: string[],
  flood?: { requests: autocannon.Request[]; connections: number }
): Promise<LatencyFigures> {
  const flooding = flood ? autocannon({ url, headers, connections: flood.connections, duration: SECONDS + 1, requests: flood.requests }) : undefined
  const [health, get] = await Promise.all([
    load({ url: url + '/health', connections: LATENCY_CONNECTIONS }),
    load({ url, headers, connections: LATENCY_CONNECTIONS, requests: cardIds.map((id) => ({ method: 'GET', path: `/tokens/${id}` })) })
  ])
  const figures = { health, get }
  if (!flooding) return figures
  const result = await flooding
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([status, stats]) => [status, stats.count ?? 0]))
  return { ...figures, flood: { statuses, requestsPerSecond: result.requests.average } }
}

async function main(): Promise<void> {
  if (args.scale || process.env.BENCH_SCALE === '1') {
    await runScaleBench()
    return
  }
  const pinning = pinLoadGenerator()
  const postgres = engine === 'postgres' ? pinPostgres(pinning.pinned) : undefined
  const summary = postgres ? `${pinning.summary}; ${postgres.summary}` : pinning.summary
  console.log(summary)
  const dir = await mkdtemp(join(tmpdir(), 'tessera-bench-'))
  const dataDir = join(dir, 'vault')
  const children: ChildProcess[] = []
  const databases = postgres ? [await benchDatabase('vault'), await benchDatabase('raw'), await benchDatabase('durable')] : []
  const vault = databases.length ? ['--database-url', databases[0].url] : []
  let raw: RawInsertChild | undefined
  try {
    const init = JSON.parse(await runCli(['init', '--data-dir', dataDir, ...vault, '--json'])) as { application: { key: string } }
    // Every server runs for the whole benchmark, idle while another is measured; measuring
    // them in alternation, round after round, keeps a noisy neighbour from skewing one side.
    const serveArgs = ['bin/tessera.cjs', 'serve', '--data-dir', dataDir, ...vault, '--port', '0']
    const service = await startServer(serveArgs)
    children.push(service.child)
    const bare = await startServer(['bin/run-ts.cjs', 'bench/bare-koa.ts'])
    children.push(bare.child)
    const durable = await startServer(['bin/run-ts.cjs', 'bench/durable-koa.ts', ...(databases.length ? [databases[2].url] : [])])
    children.push(durable.child)
    raw = await RawInsertChild.start(databases.length ? databases[1].url : join(dir, 'raw.db'))

    const app = await api<{ key: string }>(service.url, init.application.key, 'POST', '/applications', {
      name: 'bench',
      type: 'private',
      permissions: ['token:create', 'token:read']
    })
    const headers = { 'svc-api-key': app.key, 'content-type': 'application/json' }
    const cards = await Promise.all(Array.from({ length: 50 }, (_, n) => api<{ id: string }>(service.url, app.key, 'POST', '/tokens', cardRequest(n))))
    const createBody = JSON.stringify({ type: 'token', data: hundredByteString() })
    // Made once: each round's bodies carry on where the last round's stopped (the 50 cards above come first).
    const tokenizePlain = distinctBodies(TOKENIZE_VALUES, plainValue)
    const tokenizeCards = distinctBodies(TOKENIZE_CARDS, cardRequest, cards.length)
    const service_ = {
      create: (seconds = SECONDS) => load({ url: service.url + '/tokens', method: 'POST', headers, body: createBody }, seconds),
      tokenize: (seconds = SECONDS) => load({ url: service.url + '/tokenize', headers, requests: [tokenizePlain], connections: 4 }, seconds),
      tokenizeCards: (seconds = SECONDS) => load({ url: service.url + '/tokenize', headers, requests: [tokenizeCards], connections: 4 }, seconds),
      get: (seconds = SECONDS) => load({ url: service.url, headers, requests: cards.map((card) => ({ method: 'GET', path: `/tokens/${card.id}` })) }, seconds)
    }
    // The Koa ceilings (bench/koa-ceiling.ts): bare, and durable.
    const koaCeiling = (url: string) => ({
      post: (seconds = SECONDS) => load({ url: url + '/tokens', method: 'POST', headers: { 'content-type': 'application/json' }, body: createBody }, seconds),
      get: (seconds = SECONDS) => load({ url: url + '/tokens/bench' }, seconds)
    })
    const bare_ = koaCeiling(bare.url)
    const durable_ = koaCeiling(durable.url)
    // Warm-up, untimed: every workload on every server, so that the first round measures
    // optimised code and warm caches as the later rounds do, not the JIT's first pass.
    const warmUps = [service_.create, service_.get, service_.tokenize, service_.tokenizeCards, bare_.post, bare_.get, durable_.post, durable_.get]
    for (const warmUp of warmUps) await warmUp(WARM_UP_SECONDS)
    for (const kind of ['plain', 'card'] as const) await raw!.measure(WARM_UP_TRANSACTIONS, kind)
    const serviceTokens = async () =>
      (await api<{ pagination: { total_items: number } }>(service.url, app.key, 'GET', '/tokens?size=1')).pagination.total_items
    const rawAtServiceSize = async (kind: 'plain' | 'card') => {
      await raw!.fillTo(await serviceTokens())
      return raw!.measure(RAW_TRANSACTIONS, kind)
    }

    const rounds: Round[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(`round ${round}/${ROUNDS}\n`)
      rounds.push({
        barePost: await bare_.post(),
        durablePost: await durable_.post(),
        create: await service_.create(),
        bareGet: await bare_.get(),
        durableGet: await durable_.get(),
        get: await service_.get(),
        tokenize: await service_.tokenize(),
        rawPlainPerSecond: await rawAtServiceSize('plain'),
        tokenizeCards: await service_.tokenizeCards(),
        rawCardsPerSecond: await rawAtServiceSize('card')
      })
    }
    report(rounds, summary, engine)

    if (engine === 'postgres') {
      process.stderr.write('two instances on one database\n')
      const second = await startServer(serveArgs)
      children.push(second.child)
      await reportTwoInstances([service.url, second.url], headers, createBody, cards.map((card) => card.id))
      return
    }

    process.stderr.write('expression cost under hostile load\n')
    const hostile = hostileRequests()
    const cardIds = cards.map((card) => card.id)
    const quiet = await latency(service.url, headers, cardIds)
    const loaded = await latency(service.url, headers, cardIds, { requests: hostile.map(({ method, path, body }) => ({ method, path, body })), connections: HOSTILE_CONNECTIONS })
    reportHostile(hostile, quiet, loaded)
    process.stderr.write('neighbours of bulk tokenize\n')
    const bulk = { requests: [{ path: '/tokenize', ...distinctBodies(TOKENIZE_VALUES, plainValue, 1e9) }], connections: BULK_CONNECTIONS }
    reportBulkNeighbours(quiet, await latency(service.url, headers, cardIds, bulk))
  } finally {
    await raw?.close()
    await Promise.all(children.map(stopChild))
    await Promise.all(databases.map((database) => database.drop()))
    postgres?.release()
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * Creates and reads spread over two instances of one team vault (half the
 * connections on each), against one instance taking them all. On this machine
 * both instances share the server core: the figure shows what a second
 * instance costs or saves there, not how instances scale across machines.
 */
async function reportTwoInstances(urls: string[], headers: Record<string, string>, createBody: string, cardIds: string[]): Promise<void> {
  const perInstance = (url: string, kind: 'create' | 'get', connections: number, seconds = SECONDS) =>
    kind === 'create'
      ? load({ url: url + '/tokens', method: 'POST', headers, body: createBody, connections }, seconds)
      : load({ url, headers, connections, requests: cardIds.map((id) => ({ method: 'GET', path: `/tokens/${id}` })) }, seconds)
  // The second instance has just started: warmed up as every server is before the rounds.
  for (const kind of ['create', 'get'] as const) await perInstance(urls[1], kind, CONNECTIONS, WARM_UP_SECONDS)
  console.log(`\nTwo instances on one database (${CONNECTIONS / 2} connections each) against one (${CONNECTIONS}), ${SECONDS}s each\n`)
  console.log(['request', 'one instance', 'two instances'].join(' | '))
  for (const kind of ['create', 'get'] as const) {
    const one = await perInstance(urls[0], kind, CONNECTIONS)
    const two = await Promise.all(urls.map((url) => perInstance(url, kind, CONNECTIONS / 2)))
    const total = two.reduce((sum, figure) => sum + figure.requestsPerSecond, 0)
    const label = kind === 'create' ? 'POST /tokens' : 'GET /tokens/{id}'
    console.log([label, `${format(one.requestsPerSecond)} req/s`, `${format(total)} req/s (p99 ${Math.max(...two.map((f) => f.p99))} ms)`].join(' | '))
  }
}

/** One figure of the table: the service's measure, its ceiling's, and the ratio with its spread over the rounds. */
interface Figure {
  label: string
  measured: (round: Round) => number
  unit: string
  p99: (round: Round) => number
  ceilingLabel: string
  ceiling: (round: Round) => number
  ceilingUnit: string
  target: string
}

/** The targets of each figure: a team vault's are its own (issue 12). */
const TARGETS = {
  sqlite: { create: '≥ 40%', tokenize: '≥ 70%', get: '≥ 60%', cards: '≥ 60%' },
  postgres: { create: '≥ 30%', tokenize: '≥ 50%', get: '≥ 30%', cards: '≥ 50%' }
}

function report(rounds: Round[], pinning: string, engine: 'sqlite' | 'postgres'): void {
  const targets = TARGETS[engine]
  const figures: Figure[] = [
    {
      label: '(a) POST /tokens, 100-byte string',
      measured: (r) => r.create.requestsPerSecond,
      unit: 'req/s',
      p99: (r) => r.create.p99,
      ceilingLabel: 'bare Koa POST',
      ceiling: (r) => r.barePost.requestsPerSecond,
      ceilingUnit: 'req/s',
      target: targets.create
    },
    {
      label: `(b) POST /tokenize, ${format(TOKENIZE_VALUES)} plain values`,
      measured: (r) => r.tokenize.requestsPerSecond * TOKENIZE_VALUES,
      unit: 'tokens/s',
      p99: (r) => r.tokenize.p99,
      ceilingLabel: engine === 'postgres' ? 'raw seal+insert with pg' : 'raw seal+insert',
      ceiling: (r) => r.rawPlainPerSecond,
      ceilingUnit: 'tokens/s',
      target: targets.tokenize
    },
    {
      label: '(c) GET /tokens/{id}, mask',
      measured: (r) => r.get.requestsPerSecond,
      unit: 'req/s',
      p99: (r) => r.get.p99,
      ceilingLabel: 'bare Koa GET',
      ceiling: (r) => r.bareGet.requestsPerSecond,
      ceilingUnit: 'req/s',
      target: targets.get
    },
    {
      label: `(d) POST /tokenize, ${TOKENIZE_CARDS} card requests`,
      measured: (r) => r.tokenizeCards.requestsPerSecond * TOKENIZE_CARDS,
      unit: 'tokens/s',
      p99: (r) => r.tokenizeCards.p99,
      ceilingLabel: 'raw seal+insert of cards',
      ceiling: (r) => r.rawCardsPerSecond,
      ceilingUnit: 'tokens/s',
      target: targets.cards
    }
  ]
  const errors = rounds.reduce((sum, r) => sum + r.create.errors + r.tokenize.errors + r.tokenizeCards.errors + r.get.errors, 0)
  console.log(`\nTessera benchmark (${engine === 'postgres' ? 'team vault on PostgreSQL' : 'SQLite'}) — medians of ${ROUNDS} rounds, ${SECONDS}s per measurement, ${CONNECTIONS} connections (4 for tokenize), Node ${process.version}; ${pinning}\n`)
  console.log(TABLE_HEADER)
  for (const figure of figures) console.log(figureRow(rounds, figure).join(' | '))
  if (errors > 0) console.log(`\nWARNING: ${errors} failed or non-2xx responses during the run`)
  reportDurable(rounds, figures)
}

/** (a) and (c) again, against durable Koa: what is left of the distance once the durable write is paid for. */
function reportDurable(rounds: Round[], figures: Figure[]): void {
  const [create, , get] = figures
  const againstDurable: Figure[] = [
    { ...create, ceilingLabel: 'durable Koa POST', ceiling: (r) => r.durablePost.requestsPerSecond, target: '—' },
    { ...get, ceilingLabel: 'durable Koa GET', ceiling: (r) => r.durableGet.requestsPerSecond, target: '—' }
  ]
  const share = (durable: (r: Round) => number, bare: (r: Round) => number) => percent(median(rounds.map((r) => durable(r) / bare(r))))
  console.log('\nAgainst durable Koa: bare Koa that commits, with group commit, what an audited request must before answering')
  console.log(`(a create: its token row and audit row; a read: its audit row). Durable Koa served ${share((r) => r.durablePost.requestsPerSecond, (r) => r.barePost.requestsPerSecond)} of bare Koa's POSTs and ${share((r) => r.durableGet.requestsPerSecond, (r) => r.bareGet.requestsPerSecond)} of its GETs.\n`)
  console.log(TABLE_HEADER)
  for (const figure of againstDurable) console.log(figureRow(rounds, figure).join(' | '))
}

const TABLE_HEADER = ['figure', 'measured', 'ceiling (same round)', 'ratio (min–max)', 'target'].join(' | ')

function figureRow(rounds: Round[], figure: Figure): string[] {
  const m = (pick: (round: Round) => number) => median(rounds.map(pick))
  const ratios = rounds.map((r) => figure.measured(r) / figure.ceiling(r))
  return [
    figure.label,
    `${format(m(figure.measured))} ${figure.unit}, p99 ${m(figure.p99)} ms`,
    `${figure.ceilingLabel} ${format(m(figure.ceiling))} ${figure.ceilingUnit}`,
    `${percent(median(ratios))} (${percent(Math.min(...ratios))}–${percent(Math.max(...ratios))})`,
    figure.target
  ]
}

function reportHostile(hostile: HostileRequest[], quiet: LatencyFigures, loaded: LatencyFigures): void {
  console.log(`\nExpression cost — p99 latency, ${SECONDS}s, ${LATENCY_CONNECTIONS} connections per endpoint; hostile bodies back to back on ${HOSTILE_CONNECTIONS} more\n`)
  console.log(['request', 'quiet', 'with hostile bodies'].join(' | '))
  console.log(['GET /health', `${quiet.health.p99} ms`, `${loaded.health.p99} ms`].join(' | '))
  console.log(['GET /tokens/{id}', `${quiet.get.p99} ms`, `${loaded.get.p99} ms`].join(' | '))
  const answered = Object.entries(loaded.flood?.statuses ?? {}).map(([status, count]) => `${format(count)} × ${status}`)
  console.log(`\nHostile responses: ${answered.join(', ')}. Bodies, in turn:`)
  for (const request of hostile) console.log(`- ${request.label} (${format(request.body.length)} bytes; expected ${request.expected.join(' or ')})`)
  const errors = quiet.health.errors + quiet.get.errors + loaded.health.errors + loaded.get.errors
  if (errors > 0) console.log(`\nWARNING: ${errors} failed or non-2xx latency probes`)
}

/** How callers of single requests fare while BULK_CONNECTIONS callers tokenize 1,000 values each, back to back. */
function reportBulkNeighbours(quiet: LatencyFigures, loaded: LatencyFigures): void {
  const tokensPerSecond = (loaded.flood?.requestsPerSecond ?? 0) * TOKENIZE_VALUES
  console.log(`\nNeighbours of bulk work — ${SECONDS}s, ${LATENCY_CONNECTIONS} connections per endpoint; ${BULK_CONNECTIONS} more each tokenizing ${format(TOKENIZE_VALUES)} plain values back to back (${format(tokensPerSecond)} tokens/s)\n`)
  console.log(['request', 'quiet p50 / p99 / max', 'with bulk callers p50 / p99 / max'].join(' | '))
  const row = (figure: HttpFigure) => `${figure.p50} / ${figure.p99} / ${figure.max} ms`
  console.log(['GET /health', row(quiet.health), row(loaded.health)].join(' | '))
  console.log(['GET /tokens/{id}', row(quiet.get), row(loaded.get)].join(' | '))
  const refused = Object.entries(loaded.flood?.statuses ?? {}).filter(([status]) => status !== '200')
  if (refused.length > 0) console.log(`\nWARNING: bulk requests answered ${refused.map(([status, count]) => `${format(count)} × ${status}`).join(', ')}`)
}

function percent(fraction: number): string {
  return `${format(100 * fraction, 1)}%`
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
