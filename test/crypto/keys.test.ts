import { beforeAll, describe, expect, it } from 'vitest'
import { DecryptionError } from '../../src/main/crypto/aead'
import { generateMasterKey, unwrapKey, wrapKey } from '../../src/main/crypto/keys'
import { randomBytes } from '../../src/main/crypto/random'
import { generateSecret, hashSecret } from '../../src/main/crypto/secrets'
import { readySodium } from '../../src/main/crypto/sodium'
import type { SecretHashKey } from '../../src/main/crypto/types'

describe('key wrapping', () => {
  beforeAll(readySodium)

  it('unwraps with the same master key and label, and fails as a decryption error otherwise', () => {
    const master = generateMasterKey()
    const dataKey = randomBytes(32)
    const wrapped = wrapKey(master, dataKey, 'tenant:t:data:1')
    expect(unwrapKey(master, wrapped, 'tenant:t:data:1')).toEqual(dataKey)
    expect(() => unwrapKey(generateMasterKey(), wrapped, 'tenant:t:data:1')).toThrow(DecryptionError)
    expect(() => unwrapKey(master, wrapped, 'tenant:t:data:2')).toThrow(DecryptionError)
  })
})

describe('secrets', () => {
  beforeAll(readySodium)

  it('generates prefixed random secrets and stores only a keyed hash of them', () => {
    const hashKey = randomBytes(32) as SecretHashKey
    const secret = generateSecret('key_private')
    expect(secret).toMatch(/^key_private_[A-Za-z0-9_-]{43}$/)
    expect(generateSecret('key_private')).not.toBe(secret)
    const hash = hashSecret(hashKey, secret)
    expect(hash).not.toContain(secret.slice('key_private_'.length))
    expect(hashSecret(hashKey, secret)).toBe(hash)
    expect(hashSecret(randomBytes(32) as SecretHashKey, secret)).not.toBe(hash)
  })
})
