import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createMasterKeyFile, decodeMasterKey, generateMasterKey, loadMasterKey } from '../../src/main/bootstrap/master-key'
import { readySodium } from '../../src/main/crypto/sodium'
import { CannotUnlockError } from '../../src/main/domain/errors'

describe('master key', () => {
  let dir: string
  beforeAll(readySodium)
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-keys-'))
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('creates a key file readable only by its owner and never overwrites it', async () => {
    const key = await createMasterKeyFile(dir)
    expect((await stat(join(dir, 'master.key'))).mode & 0o777).toBe(0o600)
    expect(await loadMasterKey(dir, {})).toEqual(key)
    await expect(createMasterKeyFile(dir)).rejects.toMatchObject({ code: 'EEXIST' })
  })

  it('prefers TESSERA_MASTER_KEY and refuses one that is not 32 bytes of base64', async () => {
    const key = generateMasterKey()
    expect(await loadMasterKey(dir, { TESSERA_MASTER_KEY: Buffer.from(key).toString('base64') })).toEqual(key)
    await expect(loadMasterKey(dir, { TESSERA_MASTER_KEY: 'c2hvcnQ=' })).rejects.toBeInstanceOf(CannotUnlockError)
    expect(() => decodeMasterKey('not base64 at all!', 'x')).toThrow(CannotUnlockError)
  })

  it('refuses a key file other users can read', async () => {
    await writeFile(join(dir, 'master.key'), Buffer.from(generateMasterKey()).toString('base64'))
    await chmod(join(dir, 'master.key'), 0o644)
    await expect(loadMasterKey(dir, {})).rejects.toThrow(/chmod 600/)
  })

  it('returns undefined when there is neither a variable nor a file', async () => {
    expect(await loadMasterKey(dir, {})).toBeUndefined()
    expect(await readFile(join(dir, 'master.key')).catch(() => 'absent')).toBe('absent')
  })
})
