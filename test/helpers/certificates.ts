/**
 * Certificates for TLS tests, made with `openssl` in a folder of the test's
 * own: a private certificate authority, and server certificates it signs.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** An elliptic-curve key, unencrypted: quick to make. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']

export interface CertificateFiles {
  /** PEM files. */
  certFile: string
  keyFile: string
  /** The certificate's PEM text. */
  cert: string
}

const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' })

/** A self-signed CA certificate named `name`, valid for two days, in `dir` (files named after `slug`). */
export function makeCertificateAuthority(dir: string, slug: string, name: string): CertificateFiles {
  const certFile = join(dir, `${slug}.pem`)
  const keyFile = join(dir, `${slug}-key.pem`)
  openssl('req', '-x509', ...NEW_KEY, '-days', '2', '-keyout', keyFile, '-out', certFile, '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8') }
}

/** A server certificate for the DNS name `host`, signed by `ca`, valid for two days, in `dir`. */
export function issueServerCertificate(dir: string, ca: CertificateFiles, host: string): CertificateFiles {
  const certFile = join(dir, `${host}.pem`)
  const keyFile = join(dir, `${host}-key.pem`)
  const requestFile = join(dir, `${host}.csr`)
  const extensionsFile = join(dir, `${host}.ext`)
  writeFileSync(extensionsFile, `subjectAltName=DNS:${host}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`)
  openssl('req', '-new', ...NEW_KEY, '-keyout', keyFile, '-out', requestFile, '-subj', `/CN=${host}`)
  openssl('x509', '-req', '-in', requestFile, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-set_serial', '1', '-days', '2', '-out', certFile, '-extfile', extensionsFile)
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8') }
}

/** A self-signed server certificate for the DNS name `host` (no CA behind it), valid for two days, in `dir`. */
export function makeSelfSignedServerCertificate(dir: string, host: string): CertificateFiles {
  const certFile = join(dir, `${host}-self-signed.pem`)
  const keyFile = join(dir, `${host}-self-signed-key.pem`)
  openssl('req', '-x509', ...NEW_KEY, '-days', '2', '-keyout', keyFile, '-out', certFile, '-subj', `/CN=${host}`, '-addext', `subjectAltName=DNS:${host}`, '-addext', 'basicConstraints=critical,CA:FALSE')
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8') }
}
