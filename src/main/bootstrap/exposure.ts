/**
 * Serving beyond loopback: a vault reachable from the network carries API keys
 * and token data over it, so it must either speak TLS itself or sit behind a
 * reverse proxy it names (which terminates TLS); and, as DNS rebinding is then
 * only one of the ways in, it must know the host names it answers to.
 */
import type { ListenAddress } from '../infra/listen'

/** What a non-loopback listener lacks: TLS or trusted proxies (`transport`), a Host allow-list (`allowed-hosts`). */
export type ExposureGap = 'transport' | 'allowed-hosts'

export class ExposureRefusedError extends Error {
  constructor(
    /** The address that would have been bound. */
    readonly address: string,
    readonly gaps: ExposureGap[]
  ) {
    super(`Refusing to listen on ${address}, which is not a loopback address, without ${gaps.join(' and ')}.`)
    this.name = 'ExposureRefusedError'
  }
}

export interface ExposureSettings {
  tls?: unknown
  trustedProxies?: readonly string[]
  allowedHosts?: readonly string[]
}

/**
 * Whether the listener speaks plain HTTP beyond loopback behind reverse proxies: then only the
 * proxies (and loopback) may send it requests, since anyone else would send keys and card data in clear.
 */
export function plainTextOnlyToProxies(listenOn: ListenAddress, settings: ExposureSettings): boolean {
  return !listenOn.loopback && !settings.tls && (settings.trustedProxies?.length ?? 0) > 0
}

/** @throws ExposureRefusedError when `listenOn` is not loopback and a control is missing */
export function requireSafeExposure(listenOn: ListenAddress, settings: ExposureSettings): void {
  if (listenOn.loopback) return
  const gaps: ExposureGap[] = []
  if (!settings.tls && !settings.trustedProxies?.length) gaps.push('transport')
  if (!settings.allowedHosts?.length) gaps.push('allowed-hosts')
  if (gaps.length) throw new ExposureRefusedError(listenOn.address, gaps)
}
