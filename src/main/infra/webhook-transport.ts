/**
 * Sends one webhook POST without letting the vault be used to reach hosts it
 * should not (server-side request forgery): the URL's host is resolved once,
 * every address it resolves to must be loopback or allowed, and the connection
 * goes to the address that was checked (no second lookup to rebind). Redirects
 * are not followed; answers are not read beyond their status.
 */
import { lookup } from 'node:dns/promises'
import { request as httpRequest, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import { addressMatcher, parseAddressEntry } from './address-list'
import { isLoopbackAddress } from './listen'

export interface WebhookAllowList {
  /** Host names allowed as written in URLs (lower case). */
  names: ReadonlySet<string>
  /** Whether a resolved address is allowed (the listed addresses and ranges). */
  allowsAddress(address: string): boolean
}

/**
 * `--webhook-allowed-hosts`: host names, IP addresses and CIDR ranges.
 * @throws Error naming an entry that is none of them
 */
export function parseWebhookAllowList(entries: readonly string[]): WebhookAllowList {
  const names = new Set<string>()
  const addresses: string[] = []
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1')
    if (!entry) continue
    if (parseAddressEntry(entry)) addresses.push(entry)
    else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry)) names.add(entry.replace(/\.$/, ''))
    else throw new Error(`not a host name, IP address or range: ${JSON.stringify(raw)}`)
  }
  return { names, allowsAddress: addressMatcher(addresses) }
}

export type SendOutcome =
  | { outcome: 'delivered' | 'failed'; statusCode?: number; error?: string }
  | { outcome: 'blocked'; error: 'HOST_NOT_ALLOWED' }

export interface WebhookRequest {
  url: string
  body: string
  headers: Record<string, string>
  timeoutMs: number
}

/** Every address a host name resolves to. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>

const resolveAll: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true })

/** The address to connect to, checked; `blocked` when the host is not allowed, an error code when it does not resolve. */
async function checkedAddress(hostname: string, allow: WebhookAllowList, resolve: Resolver): Promise<{ address: string; family: number } | { blocked: true } | { error: string }> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  let resolved: { address: string; family: number }[]
  try {
    resolved = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host)
  } catch (error) {
    return { error: errorCode(error) }
  }
  if (resolved.length === 0) return { error: 'ENOTFOUND' }
  // Every address must pass: a name resolving to loopback and to an internal address is refused.
  const byName = allow.names.has(host.replace(/\.$/, ''))
  const allowed = resolved.every(({ address }) => isLoopbackAddress(address) || byName || allow.allowsAddress(address))
  return allowed ? resolved[0] : { blocked: true }
}

const SAFE_CODE = /^[A-Z0-9_]{1,40}$/

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' && SAFE_CODE.test(code) ? code : 'SEND_FAILED'
}

/** POSTs `request.body` to `request.url` if its host is allowed; never throws. `resolve` is for tests. */
export async function sendWebhook(request: WebhookRequest, allow: WebhookAllowList, resolve: Resolver = resolveAll): Promise<SendOutcome> {
  const url = new URL(request.url)
  const target = await checkedAddress(url.hostname, allow, resolve)
  if ('blocked' in target) return { outcome: 'blocked', error: 'HOST_NOT_ALLOWED' }
  if ('error' in target) return { outcome: 'failed', error: target.error }
  const options: RequestOptions = {
    method: 'POST',
    headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
    // The checked address, whatever a second resolution would say.
    lookup: (_host, opts, done) =>
      (opts as { all?: boolean }).all ? done(null, [{ address: target.address, family: target.family }] as never, undefined as never) : done(null, target.address, target.family),
    timeout: request.timeoutMs
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve) => {
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })), request.timeoutMs)
    const req = send(url, options, (res) => {
      clearTimeout(timer)
      res.resume()
      res.on('error', () => undefined)
      const statusCode = res.statusCode ?? 0
      req.destroy()
      if (statusCode >= 200 && statusCode < 300) resolve({ outcome: 'delivered', statusCode })
      else if (statusCode >= 300 && statusCode < 400) resolve({ outcome: 'failed', statusCode, error: 'REDIRECT_NOT_FOLLOWED' })
      else resolve({ outcome: 'failed', statusCode, error: `HTTP_${statusCode}` })
    })
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })))
    req.on('error', (error) => {
      clearTimeout(timer)
      resolve({ outcome: 'failed', error: errorCode(error) })
    })
    req.end(request.body)
  })
}
