/**
 * The desktop on a team vault whose TLS certificate comes from a private CA:
 * a real `tessera serve` on PostgreSQL with a certificate for localhost signed
 * by a CA made for the test, reached through the IPC handler table with
 * Electron's keychain mocked. Without that CA, or with another, the server is
 * refused as untrusted; with it the connection works, is kept in the keychain
 * with its CA and comes back at the next start. Something that is not a CA
 * certificate is refused, naming the field, before anything is sent. A
 * stand-in HTTPS server then shows the answer cap, the timeout and the refusal
 * of redirects holding on this path, and its connections closed on disconnect.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer, get, type Server } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'

vi.mock('electron', async () => (await import('../helpers/safe-storage')).electronWithStandInKeychain())

const { createTeamCredentialStore, TEAM_CONNECTION_FILE } = await import('../../src/main/electron/keychain')
const { memoryTeamCredentialStore, TeamConnection } = await import('../../src/main/desktop/team-connection')
const { MAX_TEAM_ANSWER_BYTES } = await import('../../src/main/desktop/team-client')
const { createDesktopHandlers } = await import('../../src/main/desktop/handlers')
const { dispatch } = await import('../../src/main/desktop/dispatch')
const { silentLogger } = await import('../../src/main/infra/logger')
const { run, serve, terminate } = await import('../helpers/cli')
const { createTestDatabase, onPostgres } = await import('../helpers/postgres')
const { TestClock } = await import('../helpers/clock')
const { freePort, startTestDesktop } = await import('../helpers/desktop')
const { issueServerCertificate, makeCertificateAuthority, makeSelfSignedServerCertificate } = await import('../helpers/certificates')

type Served = Awaited<ReturnType<typeof serve>>
type Result = { ok: true; value: any } | { ok: false; problem: { status: number; code?: string; detail: string; errors?: Record<string, string[]> } }
type Call = (channel: string, ...args: unknown[]) => Promise<Result>

const CARD = { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 } }
const MIB = 1024 * 1024

/** The base64 lines of a PEM: none may come back in an answer. */
const bodyLines = (pem: string) => pem.split('\n').filter((line) => line && !line.startsWith('-----'))

// Always on PostgreSQL, whichever engine the API suite runs on: run once, in the node project.
describe.skipIf(onPostgres)('the desktop on a team vault with a certificate from a private CA', () => {
  const logger = silentLogger()
  const cleanup: (() => Promise<unknown>)[] = []
  const answers: string[] = []
  let dir: string
  let ca: ReturnType<typeof makeCertificateAuthority>
  let otherCa: ReturnType<typeof makeCertificateAuthority>
  let serverKey: string
  let server: Served
  /** The server by the name its certificate holds. */
  let url: string
  let host: string
  let managementKey: string
  let started: Awaited<ReturnType<typeof startTestDesktop>>
  let call: Call

  /** The handler table as the app builds it: the keychain store of the desktop's data folder. */
  async function handlersOfNewStart(): Promise<Call> {
    const team = new TeamConnection({ store: await createTeamCredentialStore(started.dataDir), logger, deviceName: 'test-laptop' })
    await team.restore(() => started.desktop.status())
    const handlers = createDesktopHandlers(started.desktop, { team, logger })
    return async (channel, ...args) => {
      const result = (await dispatch(handlers, channel, args, logger)) as Result
      answers.push(JSON.stringify(result))
      return result
    }
  }

  /** The server's applications, read over REST with its CA. */
  async function applicationNames(): Promise<string[]> {
    const body = await new Promise<string>((resolve, reject) => {
      get(`${url}/applications`, { ca: ca.cert, headers: { 'svc-api-key': managementKey } }, (response) => {
        let text = ''
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        response.on('end', () => resolve(text)).on('error', reject)
      }).on('error', reject)
    })
    return (JSON.parse(body) as { data: { name: string }[] }).data.map((application) => application.name)
  }

  const connect = (request: { url?: string; key?: string; caCertificate?: string }) => call('app:connection.connect', { url, key: managementKey, ...request })
  const untrusted = (code: string) => ({ ok: false, problem: { status: 400, errors: { url: [`the server at ${host} cannot be reached: its TLS certificate is not trusted (${code}).`] } } })
  const caRefused = (message: string | RegExp) => ({ ok: false, problem: { status: 400, errors: { caCertificate: [message] } } })

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-private-ca-'))
    cleanup.push(() => rm(dir, { recursive: true, force: true }))
    ca = makeCertificateAuthority(dir, 'ca', 'Acme Private CA')
    otherCa = makeCertificateAuthority(dir, 'other-ca', 'Some Other CA')
    const certificate = issueServerCertificate(dir, ca, 'localhost')
    serverKey = await readFile(certificate.keyFile, 'utf8')

    const database = await createTestDatabase()
    cleanup.push(database.drop)
    const serverDir = join(dir, 'vault')
    const init = await run(['init', '--data-dir', serverDir, '--database-url', database.url, '--tenant-name', 'Acme Team', '--json'])
    managementKey = (JSON.parse(init.stdout) as { application: { key: string } }).application.key
    server = await serve(serverDir, { TESSERA_DATABASE_URL: database.url, TESSERA_LOG_LEVEL: 'warn' }, ['--tls-cert', certificate.certFile, '--tls-key', certificate.keyFile])
    cleanup.unshift(() => terminate(server))
    url = `https://localhost:${server.port}`
    host = `localhost:${server.port}`
    started = await startTestDesktop({ logger, clock: new TestClock(), version: '1.2.3' })
    cleanup.unshift(() => started.dispose())
    call = await handlersOfNewStart()
  }, 60_000)

  afterAll(async () => {
    for (const step of cleanup) await step()
  })

  it('refuses the server as untrusted without its CA, naming the url, and keeps nothing', async () => {
    expect(server.url).toMatch(/^https:/)
    expect(await connect({})).toMatchObject(untrusted('UNABLE_TO_VERIFY_LEAF_SIGNATURE'))
    expect(await connect({ caCertificate: '  \n' })).toMatchObject(untrusted('UNABLE_TO_VERIFY_LEAF_SIGNATURE'))
    expect(existsSync(join(started.dataDir, TEAM_CONNECTION_FILE))).toBe(false)
    expect(await call('app:connection.current')).toEqual({ ok: true, value: { kind: 'embedded' } })
  })

  it('refuses it with another CA, and with its CA under a name its certificate does not hold', async () => {
    expect(await connect({ caCertificate: otherCa.cert })).toMatchObject(untrusted('UNABLE_TO_VERIFY_LEAF_SIGNATURE'))
    const byAddress = await connect({ url: `https://127.0.0.1:${server.port}`, caCertificate: ca.cert })
    expect(byAddress).toMatchObject({
      ok: false,
      problem: { status: 400, errors: { url: [`the server at 127.0.0.1:${server.port} cannot be reached: its TLS certificate is not trusted (ERR_TLS_CERT_ALTNAME_INVALID).`] } }
    })
    expect(existsSync(join(started.dataDir, TEAM_CONNECTION_FILE))).toBe(false)
  })

  it('refuses what is not a CA certificate, naming caCertificate and never repeating it, before anything is sent', async () => {
    const brokenBlock = '-----BEGIN CERTIFICATE-----\nTm90IGEgY2VydGlmaWNhdGUgYXQgYWxs\n-----END CERTIFICATE-----\n'
    const cases: [string, string, string | RegExp][] = [
      ['text', 'not a certificate', /^holds no PEM certificate/],
      ['a block that is not X.509', brokenBlock, 'is not a valid X.509 certificate'],
      ['a chain with a bad second block', ca.cert + brokenBlock, 'certificate 2 of 2 is not a valid X.509 certificate'],
      ['a private key', serverKey, /^holds a private key, which must never leave its server/],
      ['the CA with text after it', `${ca.cert}see the wiki for details\n`, /^must hold PEM certificates only/],
      ['another kind of PEM block', ca.cert.replaceAll('CERTIFICATE', 'X509 CRL'), /^must hold PEM certificates only/],
      ['more than 64 KiB of certificates', ca.cert.repeat(Math.ceil((64 * 1024) / ca.cert.length) + 1), 'must be at most 64 KiB']
    ]
    for (const [what, caCertificate, message] of cases) {
      const refused = await connect({ caCertificate })
      expect(refused, what).toMatchObject(caRefused(message))
      for (const line of [...bodyLines(caCertificate), ...bodyLines(serverKey)]) expect(JSON.stringify(refused), what).not.toContain(line)
    }
    // Refused before any request: a URL where nothing listens is not what is named.
    const nobody = await connect({ url: `https://localhost:${await freePort()}`, caCertificate: 'not a certificate' })
    expect(nobody).toMatchObject(caRefused(/^holds no PEM certificate/))
    const cleartext = await connect({ url: `http://127.0.0.1:${await freePort()}`, caCertificate: ca.cert })
    expect(cleartext).toMatchObject(caRefused('is only used with an https:// URL: a plain http:// connection has no certificate to check'))
    expect(existsSync(join(started.dataDir, TEAM_CONNECTION_FILE))).toBe(false)
    expect(await call('app:connection.current')).toEqual({ ok: true, value: { kind: 'embedded' } })
    expect(await applicationNames()).not.toContain('Tessera desktop (test-laptop)')
  })

  it('connects with its CA: the connection says so, later calls work, and the CA is kept encrypted with the keys', async () => {
    const connected = await connect({ caCertificate: `\n${ca.cert.replaceAll('\n', '\r\n')}\n` })
    expect(connected).toEqual({ ok: true, value: { kind: 'team', url, host, tenantId: expect.any(String), tenantName: 'Acme Team', remembered: true, privateCa: true } })
    const created = await call('app:tokens.create', { ...CARD, metadata: { source: 'private-ca' } })
    expect(created).toMatchObject({ ok: true, value: { type: 'card', id: expect.any(String) } })
    expect(await call('app:tokens.list', { metadata: { source: 'private-ca' } })).toMatchObject({ ok: true, value: { pagination: { total_items: 1 } } })
    expect(await call('app:members.list', {})).toMatchObject({ ok: true, value: { data: [{ role: 'OWNER' }] } })
    const kept = (await readFile(join(started.dataDir, TEAM_CONNECTION_FILE))).toString()
    expect(kept).not.toContain(managementKey)
    for (const line of bodyLines(ca.cert)) expect(kept).not.toContain(line)
  })

  it('is back on the team vault with its CA at the next start, from the keychain', async () => {
    const again = await handlersOfNewStart()
    expect(await again('app:connection.current')).toMatchObject({ ok: true, value: { kind: 'team', url, tenantName: 'Acme Team', privateCa: true } })
    expect(await again('app:tokens.list', { metadata: { source: 'private-ca' } })).toMatchObject({ ok: true, value: { pagination: { total_items: 1 } } })
  })

  it('loads a connection kept without a CA certificate, as before: the public CAs, which do not trust this server', async () => {
    const store = await createTeamCredentialStore(dir)
    await store.save({ url, managementKey: 'key_management_x', tokenKey: 'key_private_x', tokenApplicationId: '00000000-0000-4000-8000-000000000000' })
    const restored = await new TeamConnection({ store, logger }).restore(() => started.desktop.status())
    expect(restored).toMatchObject({ kind: 'team', url, error: `The team vault at ${host} cannot be reached: its TLS certificate is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE).` })
    expect(restored).not.toHaveProperty('privateCa')
  })

  it('disconnects: the desktop application deleted on the server, the keys and the CA forgotten', async () => {
    expect(await call('app:connection.disconnect')).toEqual({ ok: true, value: { kind: 'embedded' } })
    expect(existsSync(join(started.dataDir, TEAM_CONNECTION_FILE))).toBe(false)
    expect(await applicationNames()).not.toContain('Tessera desktop (test-laptop)')
  })

  it('never hands a key or the CA certificate back to the window', () => {
    const all = answers.join('\n')
    expect(all).not.toContain(managementKey)
    expect(all).not.toMatch(/key_(private|management)_/)
    for (const line of bodyLines(ca.cert)) expect(all).not.toContain(line)
  })
})

type Answer = (request: IncomingMessage, response: ServerResponse) => void

const TENANT = { id: '6f9619ff-8b86-4011-b42d-00c04fc964ff', name: 'Acme Team', settings: {}, created_at: '2025-01-01T00:00:00.000Z' }
const APPLICATION = { id: '7f9619ff-8b86-4011-b42d-00c04fc964ff', name: 'Tessera desktop (test-laptop)', type: 'private', permissions: [], key: 'key_private_x' }

describe("the private CA path keeps the team client's limits", () => {
  const logger = silentLogger()
  let dir: string
  let ca: ReturnType<typeof makeCertificateAuthority>
  let started: Awaited<ReturnType<typeof startTestDesktop>>
  let server: Server
  let url: string
  let host: string
  let tenantAnswer: Answer
  /** Requests the stand-in was sent, `METHOD path`. */
  let requests: string[] = []

  const json = (body: unknown): Answer => (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify(body))
  }

  /** Connects with the CA through a connection of its own; its handler table, to go on with. */
  async function connect(timeoutMs?: number, to = { url, caCertificate: ca.cert }) {
    const team = new TeamConnection({ store: memoryTeamCredentialStore(), logger, deviceName: 'test-laptop', timeoutMs })
    const handlers = createDesktopHandlers(started.desktop, { team, logger })
    const result = await dispatch(handlers, 'app:connection.connect', [{ key: 'key_management_x', ...to }], logger)
    return { result, handlers }
  }

  /** The stand-in's answers: a tenant, the desktop's application, its deletion. */
  const answerAsTessera = (request: IncomingMessage, response: ServerResponse) => {
    requests.push(`${request.method} ${request.url}`)
    if (request.url === '/tenants/self') return tenantAnswer(request, response)
    if (request.url === '/applications' && request.method === 'POST') return json(APPLICATION)(request, response)
    if (request.url === `/applications/${APPLICATION.id}` && request.method === 'DELETE') return void response.writeHead(204).end()
    if (request.url === '/elsewhere') return json(TENANT)(request, response)
    response.writeHead(404, { 'content-type': 'application/problem+json' }).end('{}')
  }

  const openConnections = () => new Promise<number>((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))))

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-private-ca-'))
    ca = makeCertificateAuthority(dir, 'ca', 'Acme Private CA')
    const certificate = issueServerCertificate(dir, ca, 'localhost')
    server = createServer({ cert: certificate.cert, key: await readFile(certificate.keyFile) }, answerAsTessera)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    host = `localhost:${(server.address() as AddressInfo).port}`
    url = `https://${host}`
    started = await startTestDesktop({ logger, clock: new TestClock(), version: '1.2.3' })
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await started.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('connects to a stand-in that answers as a Tessera vault, and closes its connections once disconnected', async () => {
    tenantAnswer = json(TENANT)
    const { result, handlers } = await connect()
    expect(result).toMatchObject({ ok: true, value: { kind: 'team', host, tenantName: 'Acme Team', privateCa: true } })
    expect(await openConnections()).toBeGreaterThan(0)
    expect(await dispatch(handlers, 'app:connection.disconnect', [], logger)).toEqual({ ok: true, value: { kind: 'embedded' } })
    expect(requests).toContain(`DELETE /applications/${APPLICATION.id}`)
    await expect.poll(openConnections).toBe(0)
  })

  it("trusts a server's own self-signed certificate given as its CA, and refuses that server without it", async () => {
    tenantAnswer = json(TENANT)
    const selfSigned = makeSelfSignedServerCertificate(dir, 'localhost')
    const pinned = createServer({ cert: selfSigned.cert, key: await readFile(selfSigned.keyFile) }, answerAsTessera)
    await new Promise<void>((resolve) => pinned.listen(0, '127.0.0.1', resolve))
    try {
      const pinnedUrl = `https://localhost:${(pinned.address() as AddressInfo).port}`
      expect((await connect(undefined, { url: pinnedUrl, caCertificate: selfSigned.cert })).result).toMatchObject({ ok: true, value: { kind: 'team', privateCa: true } })
      expect((await connect(undefined, { url: pinnedUrl, caCertificate: ca.cert })).result).toMatchObject({ ok: false, problem: { errors: { url: [expect.stringContaining('its TLS certificate is not trusted')] } } })
    } finally {
      pinned.closeAllConnections()
      await new Promise((resolve) => pinned.close(resolve))
    }
  })

  it('hangs up on an answer larger than the cap, naming the url', async () => {
    let sent = 0
    tenantAnswer = (_request, response) => {
      const chunk = Buffer.alloc(MIB, 'x')
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write(`{"id":"${TENANT.id}","name":"`)
      const pump = () => {
        while (!response.destroyed && sent < 4 * MAX_TEAM_ANSWER_BYTES) {
          sent += chunk.length
          if (!response.write(chunk)) return void response.once('drain', pump)
        }
        if (!response.destroyed) response.end('"}')
      }
      pump()
    }
    expect((await connect()).result).toMatchObject({
      ok: false,
      problem: { status: 400, errors: { url: [`the server at ${host} does not answer as a Tessera vault: its answer is larger than 16 MiB.`] } }
    })
    expect(sent).toBeLessThan(MAX_TEAM_ANSWER_BYTES + 16 * MIB)
  })

  it('gives up on a server that does not answer in time', async () => {
    tenantAnswer = () => undefined
    expect((await connect(300)).result).toMatchObject({ ok: false, problem: { status: 400, errors: { url: [`the server at ${host} cannot be reached: it did not answer in time.`] } } })
  })

  it('follows no redirect', async () => {
    requests = []
    tenantAnswer = (_request, response) => void response.writeHead(302, { location: '/elsewhere' }).end()
    expect((await connect()).result).toMatchObject({ ok: false, problem: { status: 400, errors: { url: [`the server at ${host} cannot be reached: the connection failed.`] } } })
    expect(requests).toEqual(['GET /tenants/self'])
  })
})
