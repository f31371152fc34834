/**
 * The desktop against a team server that does not answer as a Tessera vault: a
 * local HTTP server standing in for a compromised one. An answer of any size is
 * read no further than the cap and the request is aborted; a tenant name its own
 * vault would refuse is refused here too, on connecting and on the status polls.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createDesktopHandlers } from '../../src/main/desktop/handlers'
import { dispatch } from '../../src/main/desktop/dispatch'
import { MAX_TEAM_ANSWER_BYTES } from '../../src/main/desktop/team-client'
import { memoryTeamCredentialStore, TeamConnection } from '../../src/main/desktop/team-connection'
import { silentLogger } from '../../src/main/infra/logger'
import { TestClock } from '../helpers/clock'
import { startTestDesktop } from '../helpers/desktop'

type Answer = (request: IncomingMessage, response: ServerResponse) => void

const TENANT = { id: '6f9619ff-8b86-4011-b42d-00c04fc964ff', name: 'Acme Team', settings: {}, created_at: '2025-01-01T00:00:00.000Z' }
const APPLICATION = { id: '7f9619ff-8b86-4011-b42d-00c04fc964ff', name: 'Tessera desktop (test-laptop)', type: 'private', permissions: [], key: 'key_private_x' }
const MIB = 1024 * 1024

describe('the desktop against a team server that does not answer as a Tessera vault', () => {
  const logger = silentLogger()
  let started: Awaited<ReturnType<typeof startTestDesktop>>
  let server: Server
  let url: string
  let host: string
  let tenantAnswer: Answer
  /** Bytes of the oversized answer the server got out before the desktop hung up, and whether it did. */
  let sent = { bytes: 0, cut: false }

  const json = (body: unknown): Answer => (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify(body))
  }

  /** A tenant whose name runs to four times the cap, streamed without a length; stops when the desktop hangs up. */
  const endlessName: Answer = (_request, response) => {
    const chunk = Buffer.alloc(MIB, 'x')
    response.writeHead(200, { 'content-type': 'application/json' })
    response.write(`{"id":"${TENANT.id}","name":"`)
    response.once('close', () => (sent.cut = !response.writableFinished))
    const pump = () => {
      while (!response.destroyed && sent.bytes < 4 * MAX_TEAM_ANSWER_BYTES) {
        sent.bytes += chunk.length
        if (!response.write(chunk)) return void response.once('drain', pump)
      }
      if (!response.destroyed) response.end('"}')
    }
    pump()
  }

  const connect = async (team = new TeamConnection({ store: memoryTeamCredentialStore(), logger, deviceName: 'test-laptop' })) => {
    const handlers = createDesktopHandlers(started.desktop, { team, logger })
    return dispatch(handlers, 'app:connection.connect', [{ url, key: 'key_management_x' }], logger)
  }

  /** A TeamConnection remembering this server, as at the app's next start. */
  const restore = async () => {
    const store = memoryTeamCredentialStore()
    await store.save({ url, managementKey: 'key_management_x', tokenKey: 'key_private_x', tokenApplicationId: APPLICATION.id })
    return new TeamConnection({ store, logger }).restore(() => started.desktop.status())
  }

  beforeAll(async () => {
    started = await startTestDesktop({ logger, clock: new TestClock(), version: '1.2.3' })
    server = createServer((request, response) => {
      if (request.url === '/tenants/self') return tenantAnswer(request, response)
      if (request.url === '/applications' && request.method === 'POST') return json(APPLICATION)(request, response)
      response.writeHead(404, { 'content-type': 'application/problem+json' }).end('{}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`
    url = `http://${host}`
  })

  afterEach(() => {
    sent = { bytes: 0, cut: false }
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await started.dispose()
  })

  it('connects to a server that answers as a Tessera vault (the stand-in is fair)', async () => {
    tenantAnswer = json(TENANT)
    expect(await connect()).toMatchObject({ ok: true, value: { kind: 'team', host, tenantName: 'Acme Team' } })
  })

  it('refuses an answer larger than the cap, naming the url, and hangs up instead of reading it', async () => {
    tenantAnswer = endlessName
    expect(await connect()).toMatchObject({
      ok: false,
      problem: { status: 400, errors: { url: [`the server at ${host} does not answer as a Tessera vault: its answer is larger than 16 MiB.`] } }
    })
    await expect.poll(() => sent.cut).toBe(true)
    expect(sent.bytes).toBeLessThan(MAX_TEAM_ANSWER_BYTES + 16 * MIB)
  })

  it('refuses an answer whose declared length is over the cap before reading it', async () => {
    tenantAnswer = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(300 * MIB) })
      response.write('{"id":"')
    }
    expect(await connect()).toMatchObject({ ok: false, problem: { status: 400, errors: { url: [expect.stringMatching(/its answer is larger than 16 MiB\.$/)] } } })
  })

  it('says so on the status polls of a remembered server that answers too much, without its name', async () => {
    tenantAnswer = endlessName
    const connection = await restore()
    expect(connection).toMatchObject({ kind: 'team', error: `The team vault at ${host} does not answer as a Tessera vault: its answer is larger than 16 MiB.` })
    expect(connection).not.toHaveProperty('tenantName')
  })

  it.each([
    ['over 200 characters', 'A'.repeat(201), 'its tenant name must be at most 200 characters'],
    ['a right-to-left override', 'Acme \u202eTeam', 'its tenant name must not contain invisible formatting characters'],
    ['a NUL character', 'Acme\u0000Team', 'its tenant name must not contain NUL characters'],
    ['nothing but spaces', '   ', 'its tenant name must not be empty']
  ])('refuses a tenant name with %s, naming the url, on connecting and on the status polls', async (_case, name, why) => {
    tenantAnswer = json({ ...TENANT, name })
    const connected = await connect()
    expect(connected).toMatchObject({ ok: false, problem: { status: 400, errors: { url: [expect.stringContaining(`the server at ${host} does not answer as a Tessera vault: ${why}`)] } } })
    const restored = await restore()
    expect(restored).toMatchObject({ kind: 'team', error: expect.stringContaining(`The team vault at ${host} does not answer as a Tessera vault: ${why}`) })
    expect(restored).not.toHaveProperty('tenantName')
  })
})
