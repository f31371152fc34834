import { beforeAll, describe, expect, it } from 'vitest'
import { DecryptionError, open, openJson, seal, sealJson } from '../../src/main/crypto/aead'
import { keyedHash } from '../../src/main/crypto/hashing'
import { randomBytes } from '../../src/main/crypto/random'
import { readySodium, sodium, sodiumWasm } from '../../src/main/crypto/sodium'
import type { DataKey, FingerprintKey } from '../../src/main/crypto/types'

const hex = (value: string) => Uint8Array.from(Buffer.from(value, 'hex'))

/** draft-irtf-cfrg-xchacha-03, appendix A.3.1 (AEAD_XChaCha20_Poly1305). */
const XCHACHA = {
  key: hex('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f') as DataKey,
  nonce: hex('404142434445464748494a4b4c4d4e4f5051525354555657'),
  aad: hex('50515253c0c1c2c3c4c5c6c7'),
  plaintext: "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
  ciphertextAndTag:
    'bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52e' +
    'c0875924c1c7987947deafd8780acf49'
}

describe('aead', () => {
  beforeAll(readySodium)

  it('opens the XChaCha20-Poly1305 known-answer vector framed as nonce ‖ ciphertext ‖ tag', () => {
    const sealed = new Uint8Array([...XCHACHA.nonce, ...hex(XCHACHA.ciphertextAndTag)])
    expect(Buffer.from(open(XCHACHA.key, sealed, XCHACHA.aad)).toString('utf8')).toBe(XCHACHA.plaintext)
  })

  it('takes only the keys that seal: the branded types are checked by the compiler (npm run typecheck)', () => {
    const raw = randomBytes(32)
    // @ts-expect-error a raw byte string is not a sealing key
    const sealed = seal(raw, Buffer.from('x'), 'ctx')
    // @ts-expect-error a fingerprint key only hashes
    expect(() => open(raw as FingerprintKey, sealed, 'ctx')).not.toThrow()
  })

  it('seals with a fresh nonce each time and round-trips JSON', () => {
    const key = randomBytes(32) as DataKey
    const a = sealJson(key, { number: '4242424242424242' }, 'token:t:1')
    const b = sealJson(key, { number: '4242424242424242' }, 'token:t:1')
    expect(Buffer.from(a.subarray(0, 24)).equals(Buffer.from(b.subarray(0, 24)))).toBe(false)
    expect(openJson(key, a, 'token:t:1')).toEqual({ number: '4242424242424242' })
  })

  it('refuses a ciphertext with any flipped bit', () => {
    const key = randomBytes(32) as DataKey
    const sealed = seal(key, Buffer.from('secret'), 'ad')
    for (const index of [0, 23, 24, sealed.length - 1]) {
      const tampered = Uint8Array.from(sealed)
      tampered[index] ^= 0x01
      expect(() => open(key, tampered, 'ad')).toThrow(DecryptionError)
    }
  })

  it('refuses a ciphertext moved to another row (wrong associated data) or opened with another key', () => {
    const key = randomBytes(32) as DataKey
    const sealed = sealJson(key, 'secret', 'token:tenant-a:id-1')
    expect(() => openJson(key, sealed, 'token:tenant-a:id-2')).toThrow(DecryptionError)
    expect(() => openJson(key, sealed, 'token:tenant-b:id-1')).toThrow(DecryptionError)
    expect(() => openJson(randomBytes(32) as DataKey, sealed, 'token:tenant-a:id-1')).toThrow(DecryptionError)
  })

  it('seals JSON of any size into what open reads, while the WASM heap grows, and leaves no plaintext or key in the heap', () => {
    const key = randomBytes(32) as DataKey
    const values = ['', 'é€😀'.repeat(3), { number: '4242424242424242', nested: ['x'.repeat(70_000)] }, 'ascii'.repeat(20), '\u0000\ud800']
    for (const [index, value] of values.entries()) {
      const associatedData = `token:tenant-é:${'i'.repeat(index * 30_000)}`
      const sealed = sealJson(key, value, associatedData)
      expect(Buffer.isBuffer(sealed)).toBe(true)
      expect(sealed.length).toBe(24 + Buffer.byteLength(JSON.stringify(value)) + 16)
      expect(openJson(key, sealed, associatedData)).toEqual(value)
      expect(Buffer.from(open(key, sealed, associatedData)).toString('utf8')).toBe(JSON.stringify(value))
      // Another libsodium call with a large input may grow (and so replace) the heap.
      sodium.crypto_generichash(32, new Uint8Array(4_000_000 * (index + 1)), null)
    }
    // A key and a plaintext nothing else has used (opening would leave the plaintext in memory the wrapper frees).
    const unusedKey = randomBytes(32) as DataKey
    const marker = `plaintext-${Buffer.from(randomBytes(16)).toString('hex')}`
    sealJson(unusedKey, marker, 'token:t:1')
    const heap = Buffer.from(sodiumWasm().HEAPU8.buffer)
    expect(heap.includes(marker)).toBe(false)
    expect(heap.includes(Buffer.from(unusedKey))).toBe(false)
  })

  it('refuses input too short to hold a nonce and a tag', () => {
    expect(() => open(randomBytes(32) as DataKey, new Uint8Array(39), 'ad')).toThrow(DecryptionError)
  })
})

describe('keyedHash', () => {
  beforeAll(readySodium)

  it('is the BLAKE2b of the reference known-answer vectors (keyed, empty input, 64-byte digest)', () => {
    const key = Uint8Array.from({ length: 64 }, (_, i) => i)
    expect(sodium.crypto_generichash(64, new Uint8Array(0), key, 'hex')).toBe(
      '10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568'
    )
  })

  it('gives a 64-character hex digest that depends on the key as well as the input', () => {
    const key = randomBytes(32) as DataKey
    const digest = keyedHash(key, '4242424242424242')
    expect(digest).toMatch(/^[0-9a-f]{64}$/)
    expect(keyedHash(key, '4242424242424242')).toBe(digest)
    expect(keyedHash(randomBytes(32) as DataKey, '4242424242424242')).not.toBe(digest)
    expect(keyedHash(key, '4242424242424241')).not.toBe(digest)
  })

  it('is keyed BLAKE2b-256 of the UTF-8 of text or of bytes, of any size, while the WASM heap grows, and leaves no input or key in the heap', () => {
    const key = randomBytes(32) as DataKey
    const inputs: (string | Uint8Array)[] = ['', 'card\u00004242424242424242', 'é€😀\ud800', 'x'.repeat(70_000), randomBytes(100), randomBytes(80_000)]
    for (const [index, input] of inputs.entries()) {
      const reference = sodium.crypto_generichash(32, typeof input === 'string' ? Buffer.from(input, 'utf8') : input, key, 'hex')
      expect(keyedHash(key, input)).toBe(reference)
      sodium.crypto_generichash(32, new Uint8Array(4_000_000 * (index + 1)), null)
      expect(keyedHash(key, input)).toBe(reference)
    }
    // The reference hashes above leave their key in memory the wrapper frees: another key here.
    const unusedKey = randomBytes(32) as DataKey
    const secret = `key_private_${Buffer.from(randomBytes(16)).toString('hex')}`
    keyedHash(unusedKey, secret)
    const heap = Buffer.from(sodiumWasm().HEAPU8.buffer)
    expect(heap.includes(secret)).toBe(false)
    expect(heap.includes(Buffer.from(unusedKey))).toBe(false)
  })
})
