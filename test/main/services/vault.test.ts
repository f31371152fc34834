import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../../src/main/crypto/keys'
import { silentLogger } from '../../../src/main/logger'
import { initVault, openVault, VaultAlreadyInitialisedError } from '../../../src/main/services/vault'

describe('vault', () => {
  let dataDir: string
  const masterKey = generateMasterKey()

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-vault-'))
    await initVault({ dataDir, masterKey, tenantName: 'Acme' })
  })
  afterAll(() => rm(dataDir, { recursive: true, force: true }))

  it('refuses to initialise a directory that already holds a vault', async () => {
    await expect(initVault({ dataDir, masterKey, tenantName: 'Again' })).rejects.toBeInstanceOf(VaultAlreadyInitialisedError)
  })

  it('refuses to open a vault with the wrong master key', async () => {
    await expect(openVault({ dataDir, masterKey: generateMasterKey(), logger: silentLogger() })).rejects.toThrow(/Cannot unlock vault/)
  })

  it('lets only one process-level owner open a vault at a time, and frees it on close', async () => {
    const first = await openVault({ dataDir, masterKey, logger: silentLogger() })
    await expect(openVault({ dataDir, masterKey, logger: silentLogger() })).rejects.toThrow(/in use by another Tessera process/)
    await first.close()
    const second = await openVault({ dataDir, masterKey, logger: silentLogger() })
    await second.close()
  })
})
