/**
 * Which certificate authorities a team connection trusts. By default those
 * Node.js trusts, through its global fetch. With a CA certificate given on the
 * connection (a company's private CA), only that CA: Node's global fetch takes
 * no CA of its own, so the requests go through undici's fetch with an Agent
 * holding it. The host name is checked either way. The PEM is checked here
 * before anything is sent, and never repeated in a message or a log.
 */
import { X509Certificate } from 'node:crypto'
import { ValidationError } from '../app'

/** Far above a CA certificate or a short chain (a few KiB each), far below what would burden the keychain. */
export const MAX_CA_CERTIFICATE_BYTES = 64 * 1024

const FIELD = 'caCertificate'

/** A PEM block of base64 (no headers: certificates have none), from BEGIN to the END with the same label. */
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\n[A-Za-z0-9+/=\s]*-----END \1-----/g
const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/

/** How one team connection's requests go out, and how its connections are closed once it is dropped. */
export interface TeamTransport {
  readonly fetch: typeof fetch
  close(): Promise<void>
}

/**
 * The CA certificate(s) given for `baseUrl`, as PEM certificates one after the other, or undefined
 * when none is given (empty counts as none); a 400 naming `caCertificate` when they will not do.
 */
export function caCertificateFor(baseUrl: string, text: string | undefined): string | undefined {
  if (text === undefined || text.trim() === '') return undefined
  if (Buffer.byteLength(text) > MAX_CA_CERTIFICATE_BYTES) throw ValidationError.field(FIELD, `must be at most ${MAX_CA_CERTIFICATE_BYTES / 1024} KiB`)
  if (new URL(baseUrl).protocol !== 'https:') throw ValidationError.field(FIELD, 'is only used with an https:// URL: a plain http:// connection has no certificate to check')
  return pemCertificates(text)
}

/** Every block of `text` checked as an X.509 certificate; anything else in it is refused. */
function pemCertificates(given: string): string {
  if (PRIVATE_KEY.test(given)) throw ValidationError.field(FIELD, "holds a private key, which must never leave its server: give only the CA's certificate")
  const text = given.replace(/\r\n?/g, '\n')
  const blocks = [...text.matchAll(PEM_BLOCK)].map(([pem, label]) => ({ pem, label }))
  if (blocks.length === 0) throw ValidationError.field(FIELD, 'holds no PEM certificate (a block from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----)')
  const outside = text.replace(PEM_BLOCK, '').trim()
  if (outside !== '' || blocks.some(({ label }) => label !== 'CERTIFICATE')) {
    throw ValidationError.field(FIELD, 'must hold PEM certificates only (-----BEGIN CERTIFICATE----- blocks), with nothing else around them')
  }
  blocks.forEach(({ pem }, index) => {
    if (!isX509(pem)) throw ValidationError.field(FIELD, blocks.length === 1 ? 'is not a valid X.509 certificate' : `certificate ${index + 1} of ${blocks.length} is not a valid X.509 certificate`)
  })
  return blocks.map(({ pem }) => pem).join('\n') + '\n'
}

function isX509(pem: string): boolean {
  try {
    new X509Certificate(pem)
    return true
  } catch {
    return false
  }
}

/** Node's global fetch and the certificate authorities it trusts; nothing to close. */
const systemTrust: TeamTransport = {
  fetch: (input, init) => fetch(input, init),
  close: async () => undefined
}

let undici: Promise<typeof import('undici')> | undefined

/**
 * undici, loaded the first time a connection has a CA of its own. Loading it makes its Agent the dispatcher of
 * Node's own fetch, unless that fetch has set up its own, which it does on its first call: so a `data:` URL
 * (no network) is fetched first, and connections without a CA keep going out exactly as before.
 */
function loadUndici(): Promise<typeof import('undici')> {
  undici ??= fetch('data:,')
    .catch(() => undefined)
    .then(() => import('undici'))
  return undici
}

/** The transport of a connection: with a CA certificate, undici's fetch trusting only it; else Node's fetch as it is. */
export async function teamTransport(caCertificate: string | undefined): Promise<TeamTransport> {
  if (caCertificate === undefined) return systemTrust
  const { Agent, fetch: undiciFetch } = await loadUndici()
  const agent = new Agent({ connect: { ca: caCertificate } })
  const fetchWithAgent = (input: string, init: RequestInit) => undiciFetch(input, { ...(init as object), dispatcher: agent })
  return {
    // undici's Response is what the global fetch returns too (Node bundles undici); only the type declarations differ.
    fetch: fetchWithAgent as unknown as typeof fetch,
    close: () => agent.close()
  }
}
