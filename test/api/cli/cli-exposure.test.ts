/**
 * Serving beyond loopback, through the CLI-started service: a non-loopback
 * address (0.0.0.0 here, which also answers on 127.0.0.1) needs TLS or trusted
 * reverse proxies, and a Host allow-list; forwarding headers count only from
 * the proxies named, so a caller cannot choose the address the audit log records.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TLSSocket } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEntry } from '../../../src/shared/types'
import { run, serve, terminate, type Served } from '../../helpers/cli'

interface Answer {
  status: number
  body: string
  /** The TLS version negotiated, for HTTPS. */
  protocol?: string | null
}

interface RequestOptions {
  headers?: IncomingHttpHeaders & Record<string, string>
  /** For HTTPS: the CA to trust, and TLS client settings. */
  ca?: Buffer
  /** The name the certificate is checked against (the Host header by default). */
  servername?: string
  minVersion?: 'TLSv1' | 'TLSv1.2'
  maxVersion?: 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'
  ciphers?: string
}

/** One request with exactly the headers given (Host included), over HTTP or HTTPS. */
function send(url: string, options: RequestOptions = {}): Promise<Answer> {
  const { headers, ...tls } = options
  const secure = url.startsWith('https:')
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(url, { headers, agent: false, ...(secure ? tls : {}) }, (res) => {
      let body = ''
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body, protocol: secure ? (res.socket as TLSSocket).getProtocol() : undefined }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** `http://0.0.0.0:PORT` as printed, reached through loopback. */
const viaLoopback = (server: Served, path: string) => `${server.url.replace('0.0.0.0', '127.0.0.1')}${path}`

/** An IPv4 address of this machine other than loopback: a request to it comes from it, a peer that is not loopback. */
const ownAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address

describe('tessera serve beyond loopback', { timeout: 90_000 }, () => {
  let root: string
  let dataDir: string
  let managementKey: string
  const files = { cert: '', key: '', otherKey: '' }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-exposure-'))
    dataDir = join(root, 'vault')
    const init = await run(['init', '--data-dir', dataDir, '--json'])
    managementKey = JSON.parse(init.stdout).application.key
    // A self-signed certificate for vault.test and 127.0.0.1, and an unrelated key.
    files.cert = join(root, 'cert.pem')
    files.key = join(root, 'key.pem')
    files.otherKey = join(root, 'other-key.pem')
    const subject = ['-subj', '/CN=vault.test', '-addext', 'subjectAltName=DNS:vault.test,IP:127.0.0.1']
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-keyout', files.key, '-out', files.cert, ...subject], { stdio: 'ignore' })
    execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', files.otherKey], { stdio: 'ignore' })
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  const serveArgs = (...args: string[]) => ['serve', '--data-dir', dataDir, '--port', '0', ...args]

  describe('refusals', () => {
    it('refuses a non-loopback address without TLS or a trusted proxy, or without allowed hosts, with exit 13, before opening the vault', async () => {
      // Against a vault in use: a command that opened the vault would be refused with 5 instead.
      const holder = await serve(dataDir)
      const [bare, tlsOnly, proxyOnly, hostsOnly, fromEnv] = await Promise.all([
        run(serveArgs('--host', '0.0.0.0')),
        run(serveArgs('--host', '0.0.0.0', '--tls-cert', files.cert, '--tls-key', files.key)),
        run(serveArgs('--host', '0.0.0.0', '--trust-proxy', '10.0.0.5')),
        run(serveArgs('--host', '0.0.0.0', '--allowed-hosts', 'vault.test')),
        run(serveArgs(), { TESSERA_HOST: '::', TESSERA_ALLOWED_HOSTS: 'vault.test' })
      ]).finally(() => terminate(holder))
      for (const result of [bare, tlsOnly, proxyOnly, hostsOnly, fromEnv]) {
        expect(result.code).toBe(13)
        expect(result.stdout).toBe('')
        expect(result.stderr).toMatch(/\nhint: .*Or listen on 127\.0\.0\.1 \(the default\)/)
      }
      expect(bare.stderr).toMatch(
        /^tessera serve: --host 0\.0\.0\.0 is not a loopback address: serving there needs TLS \(--tls-cert and --tls-key\) or a trusted reverse proxy \(--trust-proxy\), and a Host allow-list \(--allowed-hosts\)\.\n/
      )
      for (const result of [tlsOnly, proxyOnly]) {
        expect(result.stderr).toMatch(/^tessera serve: --host 0\.0\.0\.0 is not a loopback address: serving there needs a Host allow-list \(--allowed-hosts\)\.\n/)
      }
      expect(hostsOnly.stderr).toMatch(/^tessera serve: --host 0\.0\.0\.0 is not a loopback address: serving there needs TLS \(--tls-cert and --tls-key\) or a trusted reverse proxy \(--trust-proxy\)\.\n/)
      expect(fromEnv.stderr).toMatch(/^tessera serve: TESSERA_HOST :: is not a loopback address: serving there needs TLS/)
    })

    it('serves a loopback name as before, without TLS or allowed hosts', async () => {
      const server = await serve(dataDir, {}, ['--host', 'localhost'])
      expect(server.url).toMatch(/^http:\/\/(127\.0\.0\.1|\[::1\]):\d+$/)
      expect((await send(`${server.url}/health`)).status).toBe(200)
      expect((await terminate(server)).code).toBe(0)
    })

    it('refuses an unusable certificate or key with exit 2 naming the option, never printing the key', async () => {
      const secret = 'c2VjcmV0IGtleSBtYXRlcmlhbCB0aGF0IG11c3Qgbm90IGxlYWs'
      const garbageKey = join(root, 'garbage-key.pem')
      await writeFile(garbageKey, `-----BEGIN PRIVATE KEY-----\n${secret}\n-----END PRIVATE KEY-----\n`)
      const keyLines = (await readFile(files.key, 'utf8')).split('\n').filter((line) => line && !line.startsWith('-----'))
      const missing = join(root, 'missing.pem')
      const cases: { args: string[]; env?: Record<string, string>; message: string }[] = [
        { args: ['--tls-cert', missing, '--tls-key', files.key], message: `--tls-cert ${missing} does not exist.` },
        { args: ['--tls-cert', files.cert, '--tls-key', garbageKey], message: `--tls-key ${garbageKey} does not hold a private key.` },
        { args: ['--tls-cert', files.key, '--tls-key', files.key], message: `--tls-cert ${files.key} does not hold a certificate.` },
        { args: ['--tls-cert', files.cert, '--tls-key', files.otherKey], message: `--tls-key ${files.otherKey} is not the private key of the certificate in --tls-cert ${files.cert}.` },
        { args: ['--tls-cert', files.cert], message: '--tls-cert needs --tls-key as well.' },
        { args: ['--tls-key', root], env: { TESSERA_TLS_CERT: files.cert }, message: `--tls-key ${root} is a directory, not a file.` },
        { args: [], env: { TESSERA_TLS_CERT: files.cert, TESSERA_TLS_KEY: garbageKey }, message: `TESSERA_TLS_KEY ${garbageKey} does not hold a private key.` }
      ]
      const results = await Promise.all(cases.map(({ args, env }) => run(serveArgs('--host', '0.0.0.0', '--allowed-hosts', 'vault.test', ...args), env)))
      cases.forEach(({ message }, i) => {
        expect(results[i].code, message).toBe(2)
        expect(results[i].stderr, message).toMatch(/^tessera serve: .*\nhint: /)
        expect(results[i].stderr.split('\n')[0], message).toBe(`tessera serve: ${message}`)
        expect(results[i].stderr).not.toContain(secret)
        for (const line of keyLines) expect(results[i].stderr).not.toContain(line)
      })
    })
  })

  describe('TLS', () => {
    it('serves HTTPS on 0.0.0.0 with the certificate, TLS 1.2 at least, and checks the Host allow-list', async () => {
      const ca = await readFile(files.cert)
      const trusting = { ca, servername: 'vault.test' }
      const server = await serve(dataDir, {}, ['--host', '0.0.0.0', '--tls-cert', files.cert, '--tls-key', files.key, '--allowed-hosts', 'vault.test'])
      try {
        expect(server.url).toMatch(/^https:\/\/0\.0\.0\.0:\d+$/)
        const url = (path: string) => viaLoopback(server, path)

        const health = await send(url('/health'), { ...trusting, headers: { host: `vault.test:${server.port}` } })
        expect(health).toEqual({ status: 200, body: '{"status":"ok"}', protocol: 'TLSv1.3' })
        const self = await send(url('/applications/key'), { ...trusting, headers: { host: 'vault.test', 'svc-api-key': managementKey } })
        expect(self.status).toBe(200)
        expect((await send(url('/health'), { ...trusting, headers: { host: 'evil.example' } })).status).toBe(421)

        expect(await send(url('/health'), { ...trusting, maxVersion: 'TLSv1.2', headers: { host: 'vault.test' } })).toMatchObject({ status: 200, protocol: 'TLSv1.2' })
        // A client that would settle for TLS 1.1 (and whatever ciphers it takes) gets no connection.
        // (The alert says the server refused the version: the client did offer TLS 1.1.)
        const old = { ...trusting, minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0', headers: { host: 'vault.test' } } as const
        await expect(send(url('/health'), old)).rejects.toThrow(/alert protocol version/)
        // Plain HTTP on the TLS port is not served.
        await expect(send(url('/health').replace('https:', 'http:'), { headers: { host: 'vault.test' } })).rejects.toThrow()
      } finally {
        expect((await terminate(server)).code).toBe(0)
      }
    })

    it('reads the certificate and key from TESSERA_TLS_CERT and TESSERA_TLS_KEY, and serves HTTPS on loopback without allowed hosts', async () => {
      const server = await serve(dataDir, { TESSERA_TLS_CERT: files.cert, TESSERA_TLS_KEY: files.key })
      try {
        expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
        expect((await send(`${server.url}/health`, { ca: await readFile(files.cert) })).status).toBe(200)
      } finally {
        expect((await terminate(server)).code).toBe(0)
      }
    })
  })

  describe('reverse-proxy mode', () => {
    /** Requests with a wrong key, so that each one is a refusal the audit log aggregates by source address. */
    const refused = (server: Served, path: string, headers: Record<string, string>) =>
      send(viaLoopback(server, path), { headers: { host: `127.0.0.1:${server.port}`, 'svc-api-key': 'key_private_wrong', ...headers } })

    it('believes X-Forwarded-For and -Host from a configured proxy only, so the audit log names the real client and no one else can choose it', async () => {
      // The peer, 127.0.0.1, is a configured proxy; so is any 10.x proxy in front of it.
      const behindProxy = await serve(dataDir, {}, ['--host', '0.0.0.0', '--trust-proxy', '10.0.0.0/8,127.0.0.1', '--allowed-hosts', 'vault.example.com'])
      try {
        expect(behindProxy.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/)
        const url = viaLoopback(behindProxy, '/health')
        expect((await send(url, { headers: { host: '127.0.0.1', 'x-forwarded-host': 'vault.example.com' } })).status).toBe(200)
        expect((await send(url, { headers: { host: '127.0.0.1', 'x-forwarded-host': 'evil.example' } })).status).toBe(421)
        for (let i = 0; i < 3; i++) expect((await refused(behindProxy, '/tokens/a', { 'x-forwarded-for': '198.51.100.7' })).status).toBe(401)
        // The client sent its own X-Forwarded-For; the outer proxy (10.0.0.7) appended the address it saw, the inner one the outer's.
        for (let i = 0; i < 2; i++) expect((await refused(behindProxy, '/tokens/b', { 'x-forwarded-for': '203.0.113.66, 198.51.100.8, 10.0.0.7' })).status).toBe(401)
        // What cannot be read as an address is not taken for one: the source is the proxy.
        expect((await refused(behindProxy, '/sessions', { 'x-forwarded-for': 'not-an-address' })).status).toBe(401)
      } finally {
        expect((await terminate(behindProxy)).code).toBe(0) // writes the refusals it counted
      }

      // Only 192.0.2.10 is trusted: the same headers from 127.0.0.1 are ignored.
      const elsewhere = await serve(dataDir, {}, ['--host', '0.0.0.0', '--trust-proxy', '192.0.2.10', '--allowed-hosts', 'vault.example.com'])
      try {
        const url = viaLoopback(elsewhere, '/health')
        expect((await send(url, { headers: { host: '127.0.0.1', 'x-forwarded-host': 'evil.example' } })).status).toBe(200)
        expect((await send(url, { headers: { host: 'evil.example', 'x-forwarded-host': 'vault.example.com' } })).status).toBe(421)
        for (let i = 0; i < 4; i++) expect((await refused(elsewhere, '/applications', { 'x-forwarded-for': '198.51.100.9' })).status).toBe(401)
      } finally {
        expect((await terminate(elsewhere)).code).toBe(0)
      }

      const reader = await serve(dataDir)
      try {
        const logs = await fetch(`${reader.url}/logs?entity_type=request&size=100`, { headers: { 'svc-api-key': managementKey } })
        const refusals = ((await logs.json()) as { data: LogEntry[] }).data.map(({ entity_id, message }) => `${entity_id}: ${message.replace(/ (between|at) .*/, '')}`)
        expect(refusals.sort()).toEqual([
          'GET /applications: 4 requests from 127.0.0.1 refused with 401',
          'GET /sessions: 1 request from 127.0.0.1 refused with 401',
          'GET /tokens/:id: 2 requests from 198.51.100.8 refused with 401',
          'GET /tokens/:id: 3 requests from 198.51.100.7 refused with 401'
        ])
      } finally {
        expect((await terminate(reader)).code).toBe(0)
      }
    })

    it.skipIf(!ownAddress)('answers plain HTTP only to its proxies and loopback: any other peer would send keys and card data in clear', async () => {
      const server = await serve(dataDir, {}, ['--host', '0.0.0.0', '--trust-proxy', '192.0.2.10', '--allowed-hosts', 'vault.example.com'])
      try {
        const around = await send(`http://${ownAddress}:${server.port}/health`, { headers: { host: 'vault.example.com' } })
        expect(around.status).toBe(403)
        expect(JSON.parse(around.body).detail).toMatch(/plain HTTP only from its reverse proxies/)
        expect((await send(viaLoopback(server, '/health'), { headers: { host: 'vault.example.com' } })).status).toBe(200)
      } finally {
        expect((await terminate(server)).code).toBe(0)
      }
    })

    it('refuses a malformed --trust-proxy or TESSERA_TRUSTED_PROXIES with exit 2 naming it', async () => {
      const [option, variable] = await Promise.all([
        run(serveArgs('--trust-proxy', '10.0.0.5,proxy.example')),
        run(serveArgs(), { TESSERA_TRUSTED_PROXIES: '10.0.0.0/33' })
      ])
      expect(option.code).toBe(2)
      expect(option.stderr).toMatch(/^tessera serve: --trust-proxy must be IP addresses or CIDR ranges separated by commas/)
      expect(variable.code).toBe(2)
      expect(variable.stderr).toMatch(/^tessera serve: TESSERA_TRUSTED_PROXIES must be IP addresses or CIDR ranges/)
    })

    it('refuses a --trust-proxy range that would believe anyone, such as 0.0.0.0/0 or ::/0, with exit 2', async () => {
      const refused = await Promise.all([
        run(serveArgs('--host', '0.0.0.0', '--trust-proxy', '10.0.0.5,0.0.0.0/0', '--allowed-hosts', 'vault.example.com')),
        run(serveArgs('--trust-proxy', '::/0')),
        run(serveArgs(), { TESSERA_TRUSTED_PROXIES: '128.0.0.0/1' })
      ])
      for (const { code, stderr } of refused) {
        expect(code).toBe(2)
        expect(stderr).toMatch(/(--trust-proxy|TESSERA_TRUSTED_PROXIES) must name the proxies, not a range wider than \/8/)
      }
    })
  })
})
