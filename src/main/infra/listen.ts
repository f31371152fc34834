/** Listening for HTTP on an address: the REST service's socket, with the failures a user can act on. */
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RunningServer {
  server: Server
  url: string
  /** Stops accepting connections and waits for in-flight requests. */
  close(): Promise<void>
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

/**
 * Listens on host:port (port 0 picks a free one).
 * @throws ListenError
 */
export async function listen(handler: RequestListener, host: string, port: number): Promise<RunningServer> {
  const server = createServer(handler)
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
    url: `http://${printableHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Keep-alive sockets of requests still in flight close as soon as their response is sent.
        server.keepAliveTimeout = 1
        server.closeIdleConnections()
      })
  }
}
