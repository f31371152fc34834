/**
 * DNS-rebinding defence: a page on evil.example that resolves its
 * name to 127.0.0.1 must not reach the vault, so only loopback names and
 * explicitly configured hosts are accepted in the Host header.
 *
 * The raw header is parsed by its grammar (RFC 9110 §7.2: `uri-host [":" port]`),
 * not through Koa's `ctx.host`, which strips userinfo and so would read
 * `evil.example:4390@127.0.0.1` as 127.0.0.1. Anything that is not exactly an
 * allowed name, optionally followed by a port of 1 to 5 digits up to 65535, is refused,
 * and so is a request with more than one Host line.
 *
 * Behind a trusted reverse proxy the name checked is the one the proxy
 * forwarded (X-Forwarded-Host), when it sends one: that is what the browser asked for.
 */
import type { Middleware } from 'koa'
import { AppError } from '../../app'
import { forwardedHost } from './forwarded'

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]']

/** A bracketed IPv6 literal or a reg-name / IPv4 address, then an optional port. No userinfo, no spaces, no lists. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i

/** The host part of a Host header value, lower-cased; undefined when the value is not a valid `host[:port]`. */
export function hostOfHeader(value: string): string | undefined {
  const match = HOST_HEADER.exec(value)
  if (!match || (match[2] !== undefined && Number(match[2]) > 65535)) return undefined
  return match[1].toLowerCase()
}

/** How many Host header lines a request has (`rawHeaders` alternates names and values). */
function hostLines(rawHeaders: readonly string[]): number {
  let lines = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].length === 4 && rawHeaders[i].toLowerCase() === 'host') lines++
  return lines
}

/** How many distinct accepted Host values are remembered (the header is caller text: bounded). */
const REMEMBERED_HOSTS = 16

export function hostCheck(allowedHosts: readonly string[] = []): Middleware {
  const allowed = new Set([...LOOPBACK_HOSTS, ...allowedHosts.map((h) => h.toLowerCase())])
  // Nearly every request repeats one of a few Host values: an accepted one is not parsed again.
  const accepted = new Set<string>()
  return (ctx, next) => {
    // Node keeps the first of several Host lines; a proxy in front may have read another (RFC 9112 §3.2: refuse).
    if (hostLines(ctx.req.rawHeaders) > 1) throw new AppError('host_not_allowed')
    const value = forwardedHost(ctx) ?? ctx.req.headers.host ?? ''
    if (!accepted.has(value)) {
      const host = hostOfHeader(value)
      if (host === undefined || !allowed.has(host)) {
        throw new AppError('host_not_allowed')
      }
      if (accepted.size < REMEMBERED_HOSTS) accepted.add(value)
    }
    return next()
  }
}
