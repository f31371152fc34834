/**
 * `GET /health` on a team vault tells a load balancer whether the instance can
 * reach its database. Its connections go through a TCP relay that the test can
 * cut without closing anything, as a network partition does: the instance then
 * answers 503 within seconds, and 200 again once the database answers. However
 * often `/health` is called (it takes no key), the database is asked at most
 * once a second.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, serve, terminate, type Served } from '../helpers/cli'
import { createTestDatabase, onPostgres } from '../helpers/postgres'

const TEST_MS = 60_000

/** A TCP relay to PostgreSQL that can stop forwarding (a partition) and resume, and counts health queries. */
interface Relay {
  port: number
  cut(): void
  heal(): void
  /** How many `SELECT 1` queries (the health check's) went through so far. */
  healthQueries(): number
  close(): Promise<void>
}

async function startRelay(target: URL): Promise<Relay> {
  const sockets: Socket[] = []
  let partitioned = false
  let queries = 0
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname)
    sockets.push(client, upstream)
    client.on('data', (chunk: Buffer) => {
      queries += chunk.toString('latin1').split('SELECT 1\0').length - 1
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => client.write(chunk))
    for (const [from, to] of [[client, upstream], [upstream, client]]) {
      from.on('error', () => to.destroy())
      from.on('close', () => to.destroy())
    }
    if (partitioned) for (const socket of [client, upstream]) socket.pause()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      partitioned = true
      for (const socket of sockets) socket.pause()
    },
    heal() {
      partitioned = false
      for (const socket of sockets) socket.resume()
    },
    healthQueries: () => queries,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

async function health(server: Served): Promise<{ status: number; type: string | null; body: Record<string, unknown> }> {
  const response = await fetch(`${server.url}/health`)
  return { status: response.status, type: response.headers.get('content-type'), body: (await response.json()) as Record<string, unknown> }
}

/** Asks `/health` every 200 ms until it answers `status`; fails past `withinMs`. */
async function untilHealth(server: Served, status: number, withinMs: number): Promise<void> {
  const started = Date.now()
  while ((await health(server)).status !== status) {
    if (Date.now() - started > withinMs) throw new Error(`/health did not answer ${status} within ${withinMs} ms`)
    await sleep(200)
  }
}

// Always on PostgreSQL, whichever engine the API suite runs on: run once, in the node project.
describe.skipIf(onPostgres)('GET /health on a team vault', () => {
  const cleanup: (() => Promise<unknown>)[] = []
  let relay: Relay
  let server: Served

  beforeAll(async () => {
    const database = await createTestDatabase()
    cleanup.push(database.drop)
    const dir = await mkdtemp(join(tmpdir(), 'tessera-health-'))
    cleanup.push(() => rm(dir, { recursive: true, force: true }))
    const init = await run(['init', '--data-dir', dir, '--database-url', database.url])
    expect(init.code, init.stderr).toBe(0)
    relay = await startRelay(new URL(database.url))
    cleanup.unshift(() => relay.close())
    const throughRelay = new URL(database.url)
    throughRelay.port = String(relay.port)
    server = await serve(dir, { TESSERA_DATABASE_URL: throughRelay.toString() })
    cleanup.unshift(() => terminate(server))
  }, TEST_MS)

  afterAll(async () => {
    relay.heal()
    for (const step of cleanup) await step()
  })

  it('answers 200 from the moment the instance listens', async () => {
    expect(await health(server)).toMatchObject({ status: 200, body: { status: 'ok' } })
  })

  it('asks the database at most once a second, however often it is called', async () => {
    await sleep(1100)
    const before = relay.healthQueries()
    const started = Date.now()
    const answers = await Promise.all(Array.from({ length: 300 }, () => health(server)))
    const seconds = (Date.now() - started) / 1000
    expect(answers.every((answer) => answer.status === 200)).toBe(true)
    expect(relay.healthQueries() - before).toBeLessThanOrEqual(Math.ceil(seconds) + 1)
  })

  it(
    'answers 503 once its database stops answering, and 200 again once it answers',
    async () => {
      relay.cut()
      // A check each second, each given 2 s to answer.
      await untilHealth(server, 503, 8000)
      const refused = await health(server)
      expect(refused.type).toMatch(/^application\/problem\+json/)
      expect(refused.body).toMatchObject({ status: 503, code: 'database_unavailable', detail: 'This instance cannot reach the team database.' })
      relay.heal()
      await untilHealth(server, 200, 15_000)
    },
    TEST_MS
  )
})
