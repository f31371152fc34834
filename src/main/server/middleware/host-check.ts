/**
 * DNS-rebinding defence (DESIGN §7): a page on evil.example that resolves its
 * name to 127.0.0.1 must not reach the vault, so only loopback names and
 * explicitly configured hosts are accepted in the Host header.
 */
import type { Middleware } from 'koa'
import { AppError } from '../../services/errors'

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]']

export function hostCheck(allowedHosts: readonly string[] = []): Middleware {
  const allowed = new Set([...LOOPBACK_HOSTS, ...allowedHosts.map((h) => h.toLowerCase())])
  return (ctx, next) => {
    // Strip the port; IPv6 literals keep their brackets. (One read of ctx.host: each one parses the header again.)
    const header = ctx.host
    const host = header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':', 1)[0]
    if (!allowed.has(host.toLowerCase())) {
      throw new AppError(421, 'host_not_allowed', 'The Host header names a host this service does not serve.')
    }
    return next()
  }
}
