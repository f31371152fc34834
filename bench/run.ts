/**
 * `npm run bench`: measures the service on 127.0.0.1 and, in the same run,
 * the ceilings it is judged against (issue 2). Figures are
 * reported as ratios to their ceiling, which makes them comparable across
 * machines. The service and the bare Koa ceiling run as child processes;
 * autocannon runs here, so client and server each get a core.
 *
 * Environment: BENCH_ROUNDS (default 5; figures are medians), BENCH_SECONDS
 * (per HTTP measurement, default 5),
 * BENCH_CONNECTIONS (default 64: enough concurrent requests for group commit to batch).
 *
 * After the rounds, once: the p99 latency of GET /health and GET /tokens/{id} while
 * hostile expression bodies arrive continuously (bench/hostile-expressions.ts), next to
 * the same p99 without them.
 */
import autocannon from 'autocannon'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { hostileRequests, type HostileRequest } from './hostile-expressions'
import { RawInsertCeiling } from './raw-insert'

const ROOT = resolve(__dirname, '..')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const TOKENIZE_VALUES = 1000
/** Connections sending hostile bodies back to back, and connections measuring latency (per endpoint). */
const HOSTILE_CONNECTIONS = 4
const LATENCY_CONNECTIONS = 2

interface HttpFigure {
  requestsPerSecond: number
  p99: number
  errors: number
}

function startChild(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, TESSERA_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolvePromise, reject) => {
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) resolvePromise({ child, url: match[1] })
    })
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)))
  })
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolvePromise) => {
    child.removeAllListeners('exit')
    child.once('exit', () => resolvePromise())
    child.kill('SIGTERM')
  })
}

function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['bin/tessera.cjs', ...args], { cwd: ROOT, env: { ...process.env, ...env } })
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.once('exit', (code) => (code === 0 ? resolvePromise(stdout) : reject(new Error(`tessera ${args[0]} exited with ${code}`))))
  })
}

async function api<T>(url: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(url + path, {
    method,
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

async function load(options: autocannon.Options, seconds = SECONDS): Promise<HttpFigure> {
  const result = await autocannon({ connections: CONNECTIONS, duration: seconds, ...options })
  return {
    requestsPerSecond: result.requests.average,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx
  }
}

function hundredByteString(): string {
  return 'x'.repeat(100)
}

function format(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits })
}

interface Round {
  create: HttpFigure
  tokenize: HttpFigure
  get: HttpFigure
  barePost: HttpFigure
  bareGet: HttpFigure
  rawTokensPerSecond: number
}

interface LatencyFigures {
  health: HttpFigure
  get: HttpFigure
  /** Hostile responses by status, when hostile bodies were sent. */
  hostile?: Record<string, number>
}

/**
 * The p99 of GET /health and GET /tokens/{id}, measured together on a few connections,
 * optionally while `hostile` bodies arrive back to back on HOSTILE_CONNECTIONS more.
 */
async function latency(url: string, headers: Record<string, string>, cardIds: string[], hostile?: HostileRequest[]): Promise<LatencyFigures> {
  const flood = hostile
    ? autocannon({
        url,
        headers,
        connections: HOSTILE_CONNECTIONS,
        duration: SECONDS + 1,
        requests: hostile.map(({ method, path, body }) => ({ method, path, body }))
      })
    : undefined
  const [health, get] = await Promise.all([
    load({ url: url + '/health', connections: LATENCY_CONNECTIONS }),
    load({ url, headers, connections: LATENCY_CONNECTIONS, requests: cardIds.map((id) => ({ method: 'GET', path: `/tokens/${id}` })) })
  ])
  if (!flood) return { health, get }
  const result = await flood
  return { health, get, hostile: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([status, stats]) => [status, stats.count ?? 0])) }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-bench-'))
  const dataDir = join(dir, 'vault')
  const children: ChildProcess[] = []
  try {
    const init = JSON.parse(await runCli(['init', '--data-dir', dataDir, '--json'])) as { application: { key: string } }
    // Both servers run for the whole benchmark, idle while the other is measured; measuring
    // them in alternation, round after round, keeps a noisy neighbour from skewing one side.
    const service = await startChild(['bin/tessera.cjs', 'serve', '--data-dir', dataDir, '--port', '0'])
    children.push(service.child)
    const bare = await startChild(['bin/run-ts.cjs', 'bench/bare-koa.ts'])
    children.push(bare.child)

    const app = await api<{ key: string }>(service.url, init.application.key, 'POST', '/applications', {
      name: 'bench',
      type: 'private',
      permissions: ['token:create', 'token:read']
    })
    const headers = { 'svc-api-key': app.key, 'content-type': 'application/json' }
    const cards = await Promise.all(
      Array.from({ length: 50 }, () =>
        api<{ id: string }>(service.url, app.key, 'POST', '/tokens', { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 } })
      )
    )
    const createBody = JSON.stringify({ type: 'token', data: hundredByteString() })
    const tokenizeBody = JSON.stringify(Array.from({ length: TOKENIZE_VALUES }, (_, i) => `value-${i}-${hundredByteString().slice(0, 20)}`))
    const service_ = {
      create: (seconds = SECONDS) => load({ url: service.url + '/tokens', method: 'POST', headers, body: createBody }, seconds),
      tokenize: () => load({ url: service.url + '/tokenize', method: 'POST', headers, body: tokenizeBody, connections: 4 }),
      get: () => load({ url: service.url, headers, requests: cards.map((card) => ({ method: 'GET', path: `/tokens/${card.id}` })) })
    }
    const bare_ = {
      post: (seconds = SECONDS) => load({ url: bare.url + '/tokens', method: 'POST', headers: { 'content-type': 'application/json' }, body: createBody }, seconds),
      get: () => load({ url: bare.url + '/tokens/bench' })
    }
    await service_.create(2) // warm-up: JIT, caches, WAL
    await bare_.post(2)
    const raw = await RawInsertCeiling.open(join(dir, 'raw.db'))
    const serviceTokens = async () =>
      (await api<{ pagination: { total_items: number } }>(service.url, app.key, 'GET', '/tokens?size=1')).pagination.total_items

    const rounds: Round[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(`round ${round}/${ROUNDS}\n`)
      rounds.push({
        barePost: await bare_.post(),
        create: await service_.create(),
        bareGet: await bare_.get(),
        get: await service_.get(),
        tokenize: await service_.tokenize(),
        rawTokensPerSecond: await raw.fillTo(await serviceTokens()).then(() => raw.measure(10))
      })
    }
    await raw.close()
    report(rounds)

    process.stderr.write('expression cost under hostile load\n')
    const hostile = hostileRequests()
    const quiet = await latency(service.url, headers, cards.map((card) => card.id))
    const loaded = await latency(service.url, headers, cards.map((card) => card.id), hostile)
    reportHostile(hostile, quiet, loaded)
  } finally {
    await Promise.all(children.map(stopChild))
    await rm(dir, { recursive: true, force: true })
  }
}

function report(rounds: Round[]): void {
  const m = (pick: (round: Round) => number) => median(rounds.map(pick))
  const tokenizePerSecond = (round: Round) => round.tokenize.requestsPerSecond * TOKENIZE_VALUES
  const rows = [
    [
      '(a) POST /tokens, 100-byte string',
      `${format(m((r) => r.create.requestsPerSecond))} req/s, p99 ${m((r) => r.create.p99)} ms`,
      `bare Koa POST ${format(m((r) => r.barePost.requestsPerSecond))} req/s`,
      percent(m((r) => r.create.requestsPerSecond / r.barePost.requestsPerSecond)),
      '≥ 40%'
    ],
    [
      '(b) POST /tokenize, 1,000 values',
      `${format(m(tokenizePerSecond))} tokens/s, p99 ${m((r) => r.tokenize.p99)} ms`,
      `raw seal+insert ${format(m((r) => r.rawTokensPerSecond))} tokens/s`,
      percent(m((r) => tokenizePerSecond(r) / r.rawTokensPerSecond)),
      '≥ 50%'
    ],
    [
      '(c) GET /tokens/{id}, mask',
      `${format(m((r) => r.get.requestsPerSecond))} req/s, p99 ${m((r) => r.get.p99)} ms`,
      `bare Koa GET ${format(m((r) => r.bareGet.requestsPerSecond))} req/s`,
      percent(m((r) => r.get.requestsPerSecond / r.bareGet.requestsPerSecond)),
      '≥ 50%'
    ]
  ]
  const errors = rounds.reduce((sum, r) => sum + r.create.errors + r.tokenize.errors + r.get.errors, 0)
  console.log(`\nTessera benchmark — medians of ${ROUNDS} rounds, ${SECONDS}s per measurement, ${CONNECTIONS} connections, Node ${process.version}\n`)
  console.log(['figure', 'measured', 'ceiling (same round)', 'ratio', 'target'].join(' | '))
  for (const row of rows) console.log(row.join(' | '))
  if (errors > 0) console.log(`\nWARNING: ${errors} failed or non-2xx responses during the run`)
}

function reportHostile(hostile: HostileRequest[], quiet: LatencyFigures, loaded: LatencyFigures): void {
  console.log(`\nExpression cost — p99 latency, ${SECONDS}s, ${LATENCY_CONNECTIONS} connections per endpoint; hostile bodies back to back on ${HOSTILE_CONNECTIONS} more\n`)
  console.log(['request', 'quiet', 'with hostile bodies'].join(' | '))
  console.log(['GET /health', `${quiet.health.p99} ms`, `${loaded.health.p99} ms`].join(' | '))
  console.log(['GET /tokens/{id}', `${quiet.get.p99} ms`, `${loaded.get.p99} ms`].join(' | '))
  const answered = Object.entries(loaded.hostile ?? {}).map(([status, count]) => `${format(count)} × ${status}`)
  console.log(`\nHostile responses: ${answered.join(', ')}. Bodies, in turn:`)
  for (const request of hostile) console.log(`- ${request.label} (${format(request.body.length)} bytes; expected ${request.expected.join(' or ')})`)
  const errors = quiet.health.errors + quiet.get.errors + loaded.health.errors + loaded.get.errors
  if (errors > 0) console.log(`\nWARNING: ${errors} failed or non-2xx latency probes`)
}

function percent(fraction: number): string {
  return `${format(100 * fraction, 1)}%`
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
