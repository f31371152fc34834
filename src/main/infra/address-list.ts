/** Lists of IP addresses and CIDR ranges (`10.0.0.5`, `10.0.0.0/8`, `fd00::/8`), as `--trust-proxy` takes them; host names. */
import { BlockList, isIP } from 'node:net'
import { z } from 'zod'

const dnsName = z.hostname()

/** Whether `value` is an IP address or a DNS name (a server to connect to: `smtp.example.com`, `10.0.0.5`). */
export function isHostOrIp(value: string): boolean {
  return isIP(value) !== 0 || dnsName.safeParse(value).success
}

type Family = 'ipv4' | 'ipv6'

/** `ADDR` or `ADDR/PREFIX`, IPv4 or IPv6; undefined when `entry` is neither. */
export function parseAddressEntry(entry: string): { address: string; prefix?: number; family: Family } | undefined {
  const [address, prefix, ...rest] = entry.trim().split('/')
  const version = isIP(address)
  if (version === 0 || rest.length > 0) return undefined
  const family = version === 4 ? 'ipv4' : 'ipv6'
  if (prefix === undefined) return { address, family }
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1
  return bits >= 0 && bits <= (version === 4 ? 32 : 128) ? { address, prefix: bits, family } : undefined
}

/**
 * Whether an address is in the list; IPv4 addresses mapped into IPv6
 * (`::ffff:10.0.0.5`, as a dual-stack socket reports them) match their IPv4 entries.
 * @throws Error when an entry is not an address or range (validate with parseAddressEntry first)
 */
export function addressMatcher(entries: readonly string[]): (address: string) => boolean {
  const list = new BlockList()
  for (const entry of entries) {
    const parsed = parseAddressEntry(entry)
    if (!parsed) throw new Error(`not an IP address or range: ${JSON.stringify(entry)}`)
    if (parsed.prefix === undefined) list.addAddress(parsed.address, parsed.family)
    else list.addSubnet(parsed.address, parsed.prefix, parsed.family)
  }
  return (address) => {
    const version = isIP(address)
    return version !== 0 && list.check(address, version === 4 ? 'ipv4' : 'ipv6')
  }
}
