/**
 * `--tls-cert` and `--tls-key`: read and checked before anything is opened, so
 * that a wrong file fails at once naming the option. Messages name the option
 * and the path, never the files' content: a key must not end up in a log.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { createSecureContext } from 'node:tls'
import type { TlsMaterial } from '../infra/listen'
import type { CommandInput } from './commands'
import { CliError } from './exit-codes'
import { NOT_A_REGULAR_FILE, pathProblem } from './path-problems'

/** Far more than a certificate chain or a key holds: a larger file is not one. */
const MAX_PEM_BYTES = 1024 * 1024

const CERT_HINT = 'give the server certificate as PEM ("-----BEGIN CERTIFICATE-----"), followed by any intermediate certificates.'
const KEY_HINT = 'give the unencrypted PEM private key ("-----BEGIN PRIVATE KEY-----") of the certificate in --tls-cert.'

/** The file, read only once it is known to be a regular file of a sensible size: a named pipe or a device (/dev/zero) would hang the command. */
async function readOptionFile(source: string, path: string): Promise<Buffer> {
  const unreadable = (error: unknown) => {
    throw unreadableFile(source, path, error)
  }
  const info = await stat(path).catch(unreadable)
  if (info.isDirectory()) throw new CliError('USAGE', `${source} ${path} is a directory, not a file.`, 'give the path of a PEM file.')
  if (!info.isFile()) throw new CliError('USAGE', `${source} ${path}: ${NOT_A_REGULAR_FILE}.`, `give ${source} the path of a PEM file (a regular file).`)
  if (info.size > MAX_PEM_BYTES) throw new CliError('USAGE', `${source} ${path} is larger than 1 MiB: it is no certificate or key.`, `give ${source} a PEM file holding only the certificate chain, or only the key.`)
  return readFile(path).catch(unreadable)
}

/** Why `path`, given with `source`, cannot be looked at or read; any other error as it is. */
function unreadableFile(source: string, path: string, error: unknown): unknown {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return new CliError('USAGE', `${source} ${path} does not exist.`, 'give the path of an existing PEM file.')
    case 'EACCES':
    case 'EPERM':
      return new CliError('PERMISSION_DENIED', `${source} ${path} may not be read.`, 'the user running Tessera must be able to read it: fix its owner or mode.')
    default:
      return pathProblem(error, path, source) ?? error
  }
}

function parseCertificate(source: string, path: string, cert: Buffer): X509Certificate {
  try {
    return new X509Certificate(cert)
  } catch {
    throw new CliError('USAGE', `${source} ${path} does not hold a certificate.`, CERT_HINT)
  }
}

function parsePrivateKey(source: string, path: string, key: Buffer): KeyObject {
  try {
    return createPrivateKey(key)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE') {
      throw new CliError('USAGE', `${source} ${path} is encrypted with a passphrase.`, 'decrypt it (`openssl pkey -in encrypted.pem -out key.pem`) and keep the file readable only by the user running Tessera.')
    }
    throw new CliError('USAGE', `${source} ${path} does not hold a private key.`, KEY_HINT)
  }
}

/**
 * The certificate and key the options name, checked to belong together and to
 * be usable for TLS; undefined when neither is given.
 * @throws CliError naming the option at fault
 */
export async function readTlsFiles({ options, sourceOf }: CommandInput): Promise<TlsMaterial | undefined> {
  const certPath = options['tls-cert'] as string | undefined
  const keyPath = options['tls-key'] as string | undefined
  if (certPath === undefined && keyPath === undefined) return undefined
  if (certPath === undefined || keyPath === undefined) {
    const [given, missing] = certPath === undefined ? ['tls-key', 'tls-cert'] : ['tls-cert', 'tls-key']
    throw new CliError('USAGE', `${sourceOf(given)} needs --${missing} as well.`, 'give both the certificate (--tls-cert) and its private key (--tls-key), or neither.')
  }
  const [certSource, keySource] = [sourceOf('tls-cert'), sourceOf('tls-key')]
  const cert = await readOptionFile(certSource, certPath)
  const key = await readOptionFile(keySource, keyPath)
  const certificate = parseCertificate(certSource, certPath, cert)
  const privateKey = parsePrivateKey(keySource, keyPath, key)
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new CliError('USAGE', `${keySource} ${keyPath} is not the private key of the certificate in ${certSource} ${certPath}.`, KEY_HINT)
  }
  try {
    createSecureContext({ cert, key, minVersion: 'TLSv1.2' })
  } catch {
    throw new CliError('USAGE', `The certificate in ${certSource} ${certPath} and its key cannot be used for TLS.`, 'use an RSA or ECDSA certificate and its key, in PEM.')
  }
  return { cert, key }
}
