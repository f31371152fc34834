/**
 * `npm run bench`: measures the service on 127.0.0.1 and, in the same run,
 * the ceilings it is judged against (issue 2, DESIGN §11). Figures are
 * reported as ratios to their ceiling, which makes them comparable across
 * machines. The service and the bare Koa ceiling run as child processes;
 * autocannon runs here, so client and server each get a core.
 *
 * Environment: BENCH_SECONDS (per HTTP measurement, default 10),
 * BENCH_CONNECTIONS (default 64: enough concurrent requests for group commit to batch).
 */
import autocannon from 'autocannon'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { measureRawInsert } from './raw-insert'

const ROOT = resolve(__dirname, '..')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const TOKENIZE_VALUES = 1000

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

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-bench-'))
  const dataDir = join(dir, 'vault')
  const rows: string[][] = []
  try {
    const init = JSON.parse(await runCli(['init', '--data-dir', dataDir, '--json'])) as { application: { key: string } }
    const service = await startChild(['bin/tessera.cjs', 'serve', '--data-dir', dataDir, '--port', '0'])
    let tessera: { create: HttpFigure; tokenize: HttpFigure; get: HttpFigure }
    try {
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
      await load({ url: service.url + '/tokens', method: 'POST', headers, body: createBody }, 2) // warm-up
      tessera = {
        create: await load({ url: service.url + '/tokens', method: 'POST', headers, body: createBody }),
        tokenize: await load({ url: service.url + '/tokenize', method: 'POST', headers, body: tokenizeBody, connections: 4 }),
        get: await load({ url: service.url, headers, requests: cards.map((card) => ({ method: 'GET', path: `/tokens/${card.id}` })) })
      }
    } finally {
      await stopChild(service.child)
    }

    const bare = await startChild(['bin/run-ts.cjs', 'bench/bare-koa.ts'])
    let ceiling: { post: HttpFigure; get: HttpFigure }
    try {
      const headers = { 'content-type': 'application/json' }
      const createBody = JSON.stringify({ type: 'token', data: hundredByteString() })
      await load({ url: bare.url + '/tokens', method: 'POST', headers, body: createBody }, 2)
      ceiling = {
        post: await load({ url: bare.url + '/tokens', method: 'POST', headers, body: createBody }),
        get: await load({ url: bare.url + '/tokens/bench' })
      }
    } finally {
      await stopChild(bare.child)
    }
    const rawTokensPerSecond = await measureRawInsert(dir, 20)

    const tokenizePerSecond = tessera.tokenize.requestsPerSecond * TOKENIZE_VALUES
    rows.push(
      ['(a) POST /tokens, 100-byte string', `${format(tessera.create.requestsPerSecond)} req/s, p99 ${tessera.create.p99} ms`, `bare Koa POST ${format(ceiling.post.requestsPerSecond)} req/s`, ratio(tessera.create.requestsPerSecond, ceiling.post.requestsPerSecond), '≥ 40%'],
      ['(b) POST /tokenize, 1,000 values', `${format(tokenizePerSecond)} tokens/s, p99 ${tessera.tokenize.p99} ms`, `raw seal+insert ${format(rawTokensPerSecond)} tokens/s`, ratio(tokenizePerSecond, rawTokensPerSecond), '≥ 50%'],
      ['(c) GET /tokens/{id}, mask', `${format(tessera.get.requestsPerSecond)} req/s, p99 ${tessera.get.p99} ms`, `bare Koa GET ${format(ceiling.get.requestsPerSecond)} req/s`, ratio(tessera.get.requestsPerSecond, ceiling.get.requestsPerSecond), '≥ 50%']
    )
    const errors = tessera.create.errors + tessera.tokenize.errors + tessera.get.errors
    console.log(`\nTessera benchmark — ${SECONDS}s per measurement, ${CONNECTIONS} connections, Node ${process.version}\n`)
    console.log(['figure', 'measured', 'ceiling (same run)', 'ratio', 'target'].join(' | '))
    for (const row of rows) console.log(row.join(' | '))
    if (errors > 0) console.log(`\nWARNING: ${errors} failed or non-2xx responses during the run`)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

function ratio(value: number, ceiling: number): string {
  return `${format((100 * value) / ceiling, 1)}%`
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
