/** Listening for HTTP or HTTPS on an address: the REST service's socket, with the failures a user can act on. */
import { lookup } from 'node:dns/promises'
import { createServer, type RequestListener, type Server } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { isIP, type AddressInfo } from 'node:net'
import { addressMatcher } from './address-list'

export interface RunningServer {
  server: Server
  url: string
  /** Stops accepting connections and waits for in-flight requests. */
  close(): Promise<void>
}

/** A certificate chain and its private key, PEM. */
export interface TlsMaterial {
  cert: Buffer
  key: Buffer
}

/** The server could not listen; `code` is the system error (EADDRINUSE, EACCES, EADDRNOTAVAIL, ENOTFOUND…). */
export class ListenError extends Error {
  constructor(
    readonly code: string | undefined,
    readonly host: string,
    readonly port: number
  ) {
    super(`Cannot listen on ${host}, port ${port} (${code ?? 'unknown error'}).`)
    this.name = 'ListenError'
  }

  /** `127.0.0.1:4390`, `[::1]:4390`. */
  get address(): string {
    return `${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`
  }
}

/** Whether `address` (an IP literal) is a loopback address: 127.0.0.0/8 or ::1, also as IPv4 mapped into IPv6. */
export const isLoopbackAddress = addressMatcher(['127.0.0.0/8', '::1'])

/** The address a host name or IP literal listens on, and whether every address it names is loopback. */
export interface ListenAddress {
  address: string
  loopback: boolean
}

/**
 * Resolves `host` once, as `server.listen` would (its first address), so that
 * what is checked is what is bound; a name is loopback only if all its addresses are.
 * @throws ListenError (ENOTFOUND, EAI_AGAIN) when it does not resolve
 */
export async function resolveListenAddress(host: string, port: number): Promise<ListenAddress> {
  if (isIP(host)) return { address: host, loopback: isLoopbackAddress(host) }
  const addresses = await lookup(host, { all: true }).catch((error: NodeJS.ErrnoException) => {
    throw new ListenError(error.code, host, port)
  })
  return { address: addresses[0].address, loopback: addresses.every(({ address }) => isLoopbackAddress(address)) }
}

/**
 * Listens on host:port (port 0 picks a free one), with HTTPS when `tls` is
 * given (TLS 1.2 at least, whatever Node's defaults say).
 * @throws ListenError
 */
export async function listen(handler: RequestListener, host: string, port: number, tls?: TlsMaterial): Promise<RunningServer> {
  const server: Server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, handler) : createServer(handler)
  server.keepAliveTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    const fail = (error: NodeJS.ErrnoException) => reject(new ListenError(error.code, host, port))
    server.once('error', fail)
    server.listen(port, host, () => {
      server.off('error', fail)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const printableHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    server,
    url: `${tls ? 'https' : 'http'}://${printableHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Keep-alive sockets of requests still in flight close as soon as their response is sent.
        server.keepAliveTimeout = 1
        server.closeIdleConnections()
      })
  }
}
