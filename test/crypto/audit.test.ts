import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { entryMac, GENESIS_MAC, keyFingerprint, signHead, signingKeys, verifyHead, type AuditMacKey, type AuditSigningSeed, type ChainedEntry } from '../../src/main/crypto/audit'
import { randomBytes } from '../../src/main/crypto/random'
import { readySodium, sodium } from '../../src/main/crypto/sodium'

const TEXT = ['tenant_id', 'actor_id', 'actor_type', 'entity_type', 'entity_id', 'operation', 'message'] as const

const entry = (overrides: Partial<ChainedEntry> = {}): ChainedEntry => ({
  seq: 7,
  tenant_id: 't',
  actor_id: 'a',
  actor_type: 'application',
  entity_type: 'token',
  entity_id: 'tok_1',
  operation: 'read',
  message: 'Token retrieved',
  created_at: 1_795_000_000_000,
  count: null,
  ...overrides
})

const entries = fc.record({
  seq: fc.nat(),
  tenant_id: fc.string(),
  actor_id: fc.option(fc.string()),
  actor_type: fc.option(fc.string()),
  entity_type: fc.string(),
  entity_id: fc.string(),
  operation: fc.string(),
  message: fc.string({ unit: 'grapheme', maxLength: 200 }),
  created_at: fc.nat(),
  count: fc.option(fc.nat()),
  trace_id: fc.option(fc.string())
})

describe('audit MACs', () => {
  let key: AuditMacKey
  beforeAll(async () => {
    await readySodium()
    key = randomBytes(32) as AuditMacKey
  })

  it('tells apart any two different entries, and the same entry after different predecessors', () => {
    fc.assert(
      fc.property(entries, entries, (a, b) => {
        const same = JSON.stringify(a) === JSON.stringify(b)
        expect(entryMac(key, GENESIS_MAC, a).equals(entryMac(key, GENESIS_MAC, b))).toBe(same)
      })
    )
    const other = entryMac(key, GENESIS_MAC, entry())
    expect(entryMac(key, other, entry()).equals(entryMac(key, GENESIS_MAC, entry()))).toBe(false)
  })

  it('keeps field boundaries, null apart from the empty string, and a count apart from none', () => {
    const base = entryMac(key, GENESIS_MAC, entry())
    const variants = [
      entry({ actor_id: null }),
      entry({ actor_id: '' }),
      entry({ actor_type: 'applicationt', entity_type: 'oken' }),
      entry({ count: 1 }),
      entry({ seq: 8 }),
      entry({ created_at: 1_795_000_000_001 }),
      entry({ trace_id: '' }),
      entry({ trace_id: 'x' }),
      entry({ message: 'Token retrieve', trace_id: 'd' }),
      ...TEXT.map((field) => entry({ [field]: `${entry()[field] ?? ''}x` }))
    ]
    const macs = variants.map((variant) => entryMac(key, GENESIS_MAC, variant).toString('hex'))
    expect(new Set([base.toString('hex'), ...macs]).size).toBe(variants.length + 1)
  })

  it('computes the MAC of an entry without a trace id as it did before trace ids were recorded, so existing chains verify', () => {
    const fixed = Buffer.alloc(32, 1) as unknown as AuditMacKey
    const before = 'c7580914e4dab0e07d18c90fb80891727a4a17e11a5c6d1b35c41d4f74d71679'
    expect(entryMac(fixed, GENESIS_MAC, entry()).toString('hex')).toBe(before)
    expect(entryMac(fixed, GENESIS_MAC, entry({ trace_id: null })).toString('hex')).toBe(before)
    expect(entryMac(fixed, GENESIS_MAC, entry({ trace_id: 'checkout-1' })).toString('hex')).not.toBe(before)
  })

  it('is the keyed BLAKE2b-256 of version, predecessor and canonical text, for entries of any size and while the WASM heap grows', () => {
    const field = (value: string | null) => (value === null ? '-' : `${value.length}:${value}`)
    const reference = (previous: Uint8Array, e: ChainedEntry) => {
      const canonical =
        `${e.seq}|${e.created_at}|${e.count ?? '-'}|` +
        [e.tenant_id, e.actor_id, e.actor_type, e.entity_type, e.entity_id, e.operation, e.message].map(field).join('') +
        (e.trace_id == null ? '' : field(e.trace_id))
      return Buffer.from(sodium.crypto_generichash(32, Buffer.concat([Buffer.of(1), previous, Buffer.from(canonical, 'utf8')]), key))
    }
    const sizes = [0, 10, 5_000, 300_000, 12]
    let previous: Buffer = GENESIS_MAC
    for (const [index, size] of sizes.entries()) {
      const long = entry({ seq: index, message: 'é€'.repeat(size), trace_id: index % 2 ? null : 'trace' })
      const mac = entryMac(key, previous, long)
      expect(mac.equals(reference(previous, long))).toBe(true)
      // Another libsodium call with a large input may grow (and so replace) the heap.
      sodium.crypto_generichash(32, new Uint8Array(4_000_000 * (index + 1)), null)
      expect(entryMac(key, previous, long).equals(mac)).toBe(true)
      previous = mac
    }
  })

  it('depends on the key', () => {
    expect(entryMac(randomBytes(32) as AuditMacKey, GENESIS_MAC, entry()).equals(entryMac(key, GENESIS_MAC, entry()))).toBe(false)
  })
})

describe('export signatures', () => {
  beforeAll(readySodium)

  it('verify under the signing key only, and not for another head', () => {
    const keys = signingKeys(randomBytes(32) as AuditSigningSeed)
    const head = randomBytes(32)
    const signature = signHead(keys.secretKey, head)
    expect(verifyHead(keys.publicKey, head, signature)).toBe(true)
    expect(verifyHead(keys.publicKey, randomBytes(32), signature)).toBe(false)
    expect(verifyHead(signingKeys(randomBytes(32) as AuditSigningSeed).publicKey, head, signature)).toBe(false)
    expect(verifyHead(keys.publicKey, head, signature.subarray(1))).toBe(false)
    expect(keyFingerprint(keys.publicKey)).toMatch(/^[0-9a-f]{4}(:[0-9a-f]{4}){7}$/)
  })
})
