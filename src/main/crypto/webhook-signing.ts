/**
 * The vault's webhook signing keys: RSA 2048, signatures RSA-PSS over SHA-256
 * with a 32-byte salt (the digest's length), base64 in `BT-SIGNATURE`.
 */
import { constants, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto'

export interface SigningKeyPair {
  /** PKCS#8 PEM: kept only sealed. */
  privateKeyPem: string
  /** SPKI PEM: published. */
  publicKeyPem: string
}

const PSS = { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }

export function generateSigningKeyPair(): SigningKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' }
  })
  return { privateKeyPem: privateKey, publicKeyPem: publicKey }
}

/** The public half of a private key (PEM). */
export function publicKeyOf(privateKeyPem: string): string {
  return createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' }).toString()
}

/** Base64 RSA-PSS/SHA-256 signature of `body`'s UTF-8 bytes. */
export function signBody(privateKeyPem: string, body: string): string {
  return sign('sha256', Buffer.from(body, 'utf8'), { key: privateKeyPem, ...PSS }).toString('base64')
}

/** Whether `signature` (base64) signs `body` under `publicKeyPem`. */
export function verifyBody(publicKeyPem: string, body: string, signature: string): boolean {
  return verify('sha256', Buffer.from(body, 'utf8'), { key: publicKeyPem, ...PSS }, Buffer.from(signature, 'base64'))
}
