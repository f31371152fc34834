/**
 * A team vault's PostgreSQL server that cannot be reached: one clear line,
 * its own exit code, no stack trace and never the URL's password. Servers
 * that are not PostgreSQL, or whose TLS a URL asks for, are stood in for by
 * a TCP server answering the driver's first message as each would.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TLSSocket } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeSelfSignedServerCertificate } from '../helpers/certificates'
import { run } from '../helpers/cli'
import { createTestDatabase, withDatabase } from '../helpers/postgres'

const PASSWORD = 'pa55-w0rd-never-printed'
const SERVER = new URL(process.env.TESSERA_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test')

describe('team vault database failures', { timeout: 120_000 }, () => {
  let dataDir: string

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-team-errors-'))
  })
  afterAll(() => rm(dataDir, { recursive: true, force: true }))

  function expectClearFailure(result: { code: number | null; stdout: string; stderr: string }, command: string, cause: string): void {
    expect(result.code, result.stderr).toBe(15)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(new RegExp(`^tessera ${command}: Cannot reach the team database: ${cause}\\.\\nhint: [^\\n]+\\n$`))
    expect(result.stderr).not.toContain(PASSWORD)
  }

  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

  it('a refused connection (init, keys status, serve)', async () => {
    const url = `postgres://postgres:${PASSWORD}@127.0.0.1:44999/tessera`
    expectClearFailure(await run(['init', '--data-dir', dataDir, '--database-url', url]), 'init', 'the connection to 127\\.0\\.0\\.1:44999 was refused')
    expectClearFailure(await run(['keys', 'status', '--data-dir', dataDir, '--database-url', url]), 'keys status', 'the connection to 127\\.0\\.0\\.1:44999 was refused')
    expectClearFailure(await run(['serve', '--data-dir', dataDir, '--port', '0', '--database-url', url], { TESSERA_LOG_LEVEL: 'info' }), 'serve', 'the connection to 127\\.0\\.0\\.1:44999 was refused')
  })

  it("a URL's bad query options: a socket folder with no server, an sslmode that is none, a setting the server refuses", async () => {
    const socketless = `postgres://postgres:${PASSWORD}@127.0.0.1/tessera?host=${encodeURIComponent(join(dataDir, 'no-such-folder'))}`
    expectClearFailure(await run(['keys', 'status', '--data-dir', dataDir, '--database-url', socketless]), 'keys status', `there is no PostgreSQL socket at ${escaped(join(dataDir, 'no-such-folder'))}/\\.s\\.PGSQL\\.5432`)

    const bogus = await run(['keys', 'status', '--data-dir', dataDir, '--database-url', `postgres://postgres:${PASSWORD}@127.0.0.1:44999/tessera?sslmode=bogus`])
    expect(bogus.code, bogus.stderr).toBe(2)
    expect(bogus.stderr).toContain('tessera keys status: --database-url has sslmode="bogus", which is not a mode: use verify-full (with sslrootcert=FILE) for TLS, or disable.\nhint: ')

    const server = new URL(SERVER)
    server.password = PASSWORD
    server.pathname = '/postgres'
    for (const setting of ['statement_timeout%3Dabc', 'no_such_setting%3D1']) {
      const refused = await run(['keys', 'status', '--data-dir', dataDir, '--database-url', `${server.href}?options=-c%20${setting}`])
      expect(refused.code, refused.stderr).toBe(2)
      expect(refused.stderr).toMatch(/^tessera keys status: The team database refused a setting of the connection \([^)]+\)\.\nhint: check the options parameter of --database-url/)
      expect(refused.stderr).not.toContain(PASSWORD)
    }
    expect(bogus.stderr).not.toContain(PASSWORD)
  })

  it('a database that does not exist', async () => {
    const url = new URL(SERVER)
    url.password = PASSWORD
    url.pathname = `/tessera_missing_${process.pid}`
    expectClearFailure(await run(['init', '--data-dir', dataDir, '--database-url', url.toString()]), 'init', 'the database does not exist')
  })

  describe('databases Tessera may not write', () => {
    const role = `tessera_without_privileges_${process.pid}_${Date.now().toString(36)}`
    let readOnly: { url: string; drop(): Promise<void> }
    let notOwned: { url: string; drop(): Promise<void> }
    const withPassword = (database: string, user?: string) => {
      const url = new URL(database)
      if (user) url.username = user
      url.password = PASSWORD
      return url.toString()
    }
    const admin = (statement: string) => withDatabase(SERVER.toString(), (db) => db.raw(statement))

    beforeAll(async () => {
      readOnly = await createTestDatabase()
      await admin(`ALTER DATABASE ${new URL(readOnly.url).pathname.slice(1)} SET default_transaction_read_only = on`)
      // Since PostgreSQL 15 only a database's owner may create tables in its public schema.
      notOwned = await createTestDatabase()
      await admin(`CREATE ROLE ${role} LOGIN`)
    })
    afterAll(async () => {
      await Promise.all([readOnly?.drop(), notOwned?.drop()])
      await admin(`DROP ROLE IF EXISTS ${role}`)
    })

    it('a read-only database (a standby) is exit 15, and a user without the privileges exit 7, each said in one line', async () => {
      const onStandby = await run(['init', '--data-dir', dataDir, '--database-url', withPassword(readOnly.url)])
      expect(onStandby.code, onStandby.stderr).toBe(15)
      expect(onStandby.stderr).toMatch(/^tessera init: The team database is read-only \(a standby server, or default_transaction_read_only is on\)\.\nhint: point --database-url [^\n]+\n$/)
      const unprivileged = await run(['init', '--data-dir', dataDir, '--database-url', withPassword(notOwned.url, role)])
      expect(unprivileged.code, unprivileged.stderr).toBe(7)
      expect(unprivileged.stderr).toMatch(/^tessera init: The team database refused an operation: its user lacks a privilege Tessera needs\.\nhint: make the user [^\n]+\n$/)
      for (const result of [onStandby, unprivileged]) expect(result.stderr).not.toContain(PASSWORD)
    })

    it('a search_path naming no schema that exists is exit 15, with nothing created', async () => {
      const url = new URL(withPassword(notOwned.url))
      url.searchParams.set('options', '-c search_path=no_such_schema')
      const result = await run(['init', '--data-dir', dataDir, '--database-url', url.toString()])
      expect(result.code, result.stderr).toBe(15)
      expect(result.stderr).toMatch(/^tessera init: The team database has no schema to create Tessera's tables in: its search_path names none that exists\.\nhint: create the schema [^\n]+\n$/)
      expect(result.stderr).not.toContain(PASSWORD)
      const tables = await withDatabase(notOwned.url, (db) => db('pg_tables').whereNotIn('schemaname', ['pg_catalog', 'information_schema']).pluck('tablename'))
      expect(tables).toEqual([])
    })
  })

  describe('servers that are not what the URL expects', () => {
    let certFile: string
    let tls: { cert: Buffer; key: Buffer }
    const servers: Server[] = []

    beforeAll(async () => {
      // A self-signed certificate for localhost only.
      const certificate = makeSelfSignedServerCertificate(dataDir, 'localhost')
      certFile = certificate.certFile
      tls = { cert: await readFile(certFile), key: await readFile(certificate.keyFile) }
    })
    afterAll(() => Promise.all(servers.map((server) => new Promise((closed) => server.close(closed)))))

    /** A server on 127.0.0.1 that answers the client's first message (a TLS request, or the start-up message) as `answer` does; its URL. */
    async function impostor(answer: (socket: Socket) => void, query = ''): Promise<string> {
      const server = createServer((socket) => socket.once('data', () => answer(socket)))
      servers.push(server)
      await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
      return `postgres://tessera:${PASSWORD}@127.0.0.1:${(server.address() as AddressInfo).port}/tessera${query}`
    }

    /**
     * Accepts the TLS request and completes the handshake with the self-signed certificate. In the
     * same turn: the client's first TLS message, sent once it reads the 'S', must find TLS listening.
     */
    const selfSignedTls = (socket: Socket) => {
      socket.write('S')
      new TLSSocket(socket, { isServer: true, ...tls }).on('error', () => undefined)
    }

    it('a server without TLS, when the URL asks for it', async () => {
      const url = await impostor((socket) => socket.write('N'), '?sslmode=verify-full')
      expectClearFailure(await run(['init', '--data-dir', dataDir, '--database-url', url]), 'init', escaped('the server does not accept TLS, which the URL asks for (sslmode)'))
    })

    it('sslmode=require is refused as any TLS request, without the driver\'s multi-line warning', async () => {
      const url = await impostor((socket) => socket.write('N'), '?sslmode=require')
      const result = await run(['init', '--data-dir', dataDir, '--database-url', url])
      expectClearFailure(result, 'init', escaped('the server does not accept TLS, which the URL asks for (sslmode)'))
      expect(result.stderr).not.toContain('SECURITY WARNING')
    })

    it('a certificate that is not trusted, or not for the host connected to', async () => {
      const untrusted = await impostor(selfSignedTls, '?sslmode=verify-full')
      expectClearFailure(await run(['keys', 'status', '--data-dir', dataDir, '--database-url', untrusted]), 'keys status', escaped("the server's TLS certificate was not accepted (DEPTH_ZERO_SELF_SIGNED_CERT)"))
      // Trusted through sslrootcert, but connected to by an address it does not name.
      const otherName = await impostor(selfSignedTls, `?sslmode=verify-full&sslrootcert=${encodeURIComponent(certFile)}`)
      expectClearFailure(
        await run(['serve', '--data-dir', dataDir, '--port', '0', '--database-url', otherName]),
        'serve',
        escaped("the server's TLS certificate was not accepted (ERR_TLS_CERT_ALTNAME_INVALID)")
      )
    })

    it('a server that closes the connection, or answers the TLS request as PostgreSQL does not', async () => {
      const closing = await impostor((socket) => socket.destroy())
      expectClearFailure(await run(['keys', 'status', '--data-dir', dataDir, '--database-url', closing]), 'keys status', escaped('the server closed the connection before it was ready (is a PostgreSQL server listening on that port?)'))
      const web = await impostor((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'), '?sslmode=verify-full')
      expectClearFailure(await run(['keys', 'status', '--data-dir', dataDir, '--database-url', web]), 'keys status', 'the server did not answer the request for TLS as PostgreSQL does')
    })

    it('refuses a URL naming TLS files that cannot be read, before connecting (exit 2)', async () => {
      const missing = join(dataDir, 'no-such-ca.pem')
      const url = `postgres://tessera:${PASSWORD}@127.0.0.1:44999/tessera?sslmode=verify-full&sslrootcert=${encodeURIComponent(missing)}`
      const fromOption = await run(['keys', 'status', '--data-dir', dataDir, '--database-url', url])
      expect(fromOption.code, fromOption.stderr).toBe(2)
      expect(fromOption.stderr).toContain(`tessera keys status: --database-url names TLS files that cannot be read: sslrootcert (${missing}).`)
      const fromEnvironment = await run(['keys', 'status', '--data-dir', dataDir], { TESSERA_DATABASE_URL: url })
      expect(fromEnvironment.code, fromEnvironment.stderr).toBe(2)
      expect(fromEnvironment.stderr).toContain(`TESSERA_DATABASE_URL names TLS files that cannot be read: sslrootcert (${missing}).`)
      for (const result of [fromOption, fromEnvironment]) expect(result.stderr).not.toContain(PASSWORD)
    })
  })
})
