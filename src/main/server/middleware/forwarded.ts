/**
 * Reverse-proxy mode: the forwarding headers (X-Forwarded-For, -Proto, -Host)
 * are believed only when the TCP peer is one of the configured proxies.
 * Koa's `app.proxy` would believe them from anyone, so that any caller could
 * choose the source address the audit log records; it stays off.
 *
 * From a trusted peer, the client is found by walking X-Forwarded-For from the
 * right (the entry the nearest proxy added) past every trusted proxy: the first
 * address that is not one is the client, so a client cannot plant one by sending
 * the header itself. X-Forwarded-Proto and -Host are read from their last value,
 * the one the proxy that connects to Tessera set.
 */
import { isIP } from 'node:net'
import type { Context, Middleware } from 'koa'
import { isLoopbackAddress } from '../../infra/listen'
import { AppError } from '../../app'

/** An X-Forwarded-For element as an IP literal: bare, `[v6]`, `[v6]:port` or `v4:port`; undefined when it is none. */
function addressOf(element: string): string | undefined {
  const value = element.trim()
  if (isIP(value)) return value
  const match = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/i.exec(value) ?? /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(value)
  return match && isIP(match[1]) ? match[1] : undefined
}

/** The last comma-separated value of a header, or undefined when it is absent or empty. */
function lastValue(header: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(header) ? header.join(',') : header
  const last = joined?.split(',').pop()?.trim()
  return last || undefined
}

const FORWARDED_HOST = Symbol('forwarded host')

/** The Host value a trusted proxy forwarded for this request, if any. */
export function forwardedHost(ctx: Context): string | undefined {
  return (ctx as Context & { [FORWARDED_HOST]?: string })[FORWARDED_HOST]
}

/** Whether a peer address is one of the trusted proxies (`addressMatcher` of `--trust-proxy`). */
export type ProxyMatcher = (address: string) => boolean

export function trustForwardingFrom(trusted: ProxyMatcher): Middleware {
  /** The client: walking from the nearest hop, the first address that is not a trusted proxy (an unreadable one stops the walk). */
  const clientOf = (peer: string, header: string | string[] | undefined): string => {
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').filter((hop) => hop.trim())
    let client = peer
    for (let i = hops.length - 1; i >= 0 && trusted(client); i--) {
      const address = addressOf(hops[i])
      if (!address) break
      client = address
    }
    return client
  }
  return (ctx, next) => {
    const peer = ctx.req.socket.remoteAddress ?? ''
    if (!trusted(peer)) return next()
    const { headers } = ctx.req
    ctx.request.ip = clientOf(peer, headers['x-forwarded-for'])
    const protocol = lastValue(headers['x-forwarded-proto'])?.toLowerCase()
    if (protocol === 'http' || protocol === 'https') Object.defineProperty(ctx.request, 'protocol', { value: protocol })
    const host = lastValue(headers['x-forwarded-host'])
    if (host !== undefined) Object.assign(ctx, { [FORWARDED_HOST]: host })
    return next()
  }
}

/**
 * Plain HTTP beyond loopback (reverse-proxy mode without TLS): a request from a peer that is
 * neither a trusted proxy nor loopback came around the proxy, in clear text; it is refused.
 */
export function refuseAllButProxies(trusted: ProxyMatcher): Middleware {
  return (ctx, next) => {
    const peer = ctx.req.socket.remoteAddress ?? ''
    if (!trusted(peer) && !isLoopbackAddress(peer)) throw new AppError('not_through_proxy')
    return next()
  }
}
