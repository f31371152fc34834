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
    // ctx.hostname strips the port; IPv6 literals keep their brackets in ctx.host.
    const host = ctx.host.startsWith('[') ? ctx.host.slice(0, ctx.host.indexOf(']') + 1) : ctx.hostname
    if (!allowed.has(host.toLowerCase())) {
      throw new AppError(421, 'host_not_allowed', 'The Host header names a host this service does not serve.')
    }
    return next()
  }
}
